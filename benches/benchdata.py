"""Where the benchmarks find the public data sets they measure on, and what to say when
one is missing.

The data sets are not part of the repository. They are read from the folder named by
the ``AIRCHER_DATA`` environment variable, or else from ``shared/data`` beside the
repository's folder when that exists. A benchmark whose data is absent skips (under
pytest) or stops (as a script) with :func:`missing`'s message, which names the file,
where it comes from and how to point the benchmark at it.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

__all__ = ["DATA_ENV", "LOCOMO", "SWEBENCH_LITE", "TRAJECTORIES", "DataSet", "data_dir"]

DATA_ENV = "AIRCHER_DATA"
_BESIDE = Path(__file__).resolve().parents[2] / "shared" / "data"


def data_dir() -> Path:
    """The folder the data sets are read from: ``$AIRCHER_DATA`` when it is set, else
    ``shared/data`` beside the repository."""
    configured = os.environ.get(DATA_ENV)
    return Path(configured).expanduser() if configured else _BESIDE


@dataclasses.dataclass(frozen=True)
class DataSet:
    """One data set: its file or folder name inside :func:`data_dir`, what it is, and
    where a fresh clone gets it."""

    name: str
    what: str
    source: str

    @property
    def path(self) -> Path:
        return data_dir() / self.name

    def missing(self) -> str:
        """The message for a run without this data set."""
        configured = os.environ.get(DATA_ENV)
        where = f" ({DATA_ENV} is {configured}, which does not hold it)" if configured else ""
        return f"needs {self.what}: set {DATA_ENV} to a folder holding {self.name} ({self.source}){where}"


LOCOMO = DataSet(
    "locomo-dev.json",
    "the LoCoMo conversations",
    "a JSON list of LoCoMo conversations in the schema of data/locomo10.json of the public "
    "repository snap-research/LoCoMo; the figures are on its conversations conv-26, conv-30 and conv-41",
)
SWEBENCH_LITE = DataSet(
    "swebench-lite-dev",
    "the dev split of SWE-bench Lite",
    "a folder of SWE-bench Lite's dev instances: instances.jsonl, one row per instance {instance_id, repo, "
    "base_commit, problem_statement, gold_files, tree}, gold_files being the files the instance's patch "
    "touches and tree a .tar.gz in the folder holding every .py file of the repository at base_commit",
)
TRAJECTORIES = DataSet(
    "trajectories-mini-swe-agent-gemini3pro.tar.gz",
    "the mini-swe-agent trajectories",
    "the 500 SWE-bench Verified runs of mini-swe-agent with Gemini 3 Pro in the public repository "
    "gruckion/mini-swe-agent, one JSONL file of events per run, in the format aircher_mem.replay reads",
)
