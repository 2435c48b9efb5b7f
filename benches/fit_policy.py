"""Fits the default policy's weights on the first half of the trajectories (by name)
with a small grid search; report on the second half with
``python -m aircher_mem.replay ... --half second``.

    python benches/fit_policy.py "$AIRCHER_DATA/trajectories-mini-swe-agent-gemini3pro.tar.gz"

(the data set: ``TRAJECTORIES`` in benchdata.py says what it is and where it comes from)

Objective, summed over the 4K and 8K budgets: share of re-reads held minus share of
edits without view."""

from __future__ import annotations

import itertools
import sys

import aircher_mem as am
from aircher_mem import replay as rp
from aircher_mem.engine import ContextPolicy

GRID = {
    "decay_minutes": [5.0, 15.0, 60.0],
    "weight_code_snippet": [0.7, 1.5, 3.0],
    "weight_assistant_text": [0.9, 0.3],
}


def main(path: str) -> None:
    trajectories = list(rp.load_trajectories(path))
    fit = trajectories[: len(trajectories) // 2]
    counter = rp._CachedCounter()
    rows = []
    for values in itertools.product(*GRID.values()):
        overrides = dict(zip(GRID, values))
        overrides["weight_assistant_tool_calls"] = overrides["weight_assistant_text"] * 1.2 / 0.9
        objective = 0.0
        for budget in (4000, 8000):
            policy = am.Policy(
                max_tokens=budget, context=ContextPolicy(**overrides), drop_stale_views=True, supersede_views=True
            )
            [s] = rp.summarize(
                rp.replay(events, policy, instance=i, strategy="fit", tokens=counter) for i, events in fit
            )
            objective += s.held_share - s.edits_without_view / max(1, s.edits)
        rows.append((objective, overrides))
        print(f"{objective:+.4f} {overrides}", file=sys.stderr)
    rows.sort(key=lambda r: -r[0])
    print("best:", rows[0])


if __name__ == "__main__":
    main(sys.argv[1])
