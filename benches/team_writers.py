"""A team's store on PostgreSQL under many writers: ``--writers`` processes (each a
machine with its own Memory, its own project folder, the same ``[store] url``)
store ``--turns`` turns, as many memories and as many episodic records each:
``add_turn`` with an idempotency key (every tenth turn sent twice, as a client does
after a lost answer), ``remember``, and ``record_tool_call`` with an idempotency key
(every tenth sent twice too), under a task the writer started; a reader process
recalls throughout. A write that fails (the server is down) is sent again, with the
same key, until it is acknowledged.

With ``--kill``, one more writer is killed (SIGKILL) a third of the way through,
and the server itself (``pg_ctl stop -m immediate``, as a crash) halfway, then
started again: every write acknowledged before must be there after.

Reports the writes acknowledged, the rows on the server, the acknowledged writes
missing (lost), the texts and records stored twice (duplicates), the task's tool
count against the records stored, the throughput, and the lag
from a turn's acknowledgement to the end of the reader's first recall whose state
holds it (p50, p95, max; the reader's own recall time is in it).

The server: ``--url`` (a database where this may create one), else a private
cluster started for the run (tests/pg_cluster.py; needed for ``--kill``).

    python benches/team_writers.py [--writers 8] [--turns 500] [--kill] [--url URL]
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import pg_cluster
import psycopg

WRITER = r"""
import json, os, sys, time
import aircher_mem as am
from aircher_mem.config import StorePolicy
from aircher_mem.errors import StoreError
url, who, n, root, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
os.makedirs(root, exist_ok=True)
policy = am.Policy(store=StorePolicy(url=url, lock_seconds=120))

def sent(call):
    while True:
        try:
            return call()
        except StoreError:
            time.sleep(0.2)

log = open(out, "a", buffering=1)
with am.Memory.open(root, policy=policy) as m:
    try:
        m.task("start", f"task-{who}", description=f"writer {who} works", branch="main")
    except am.InvalidInputError:  # started before this writer was killed, say
        pass
    for i in range(n):
        text = f"writer {who} turn {i}: we use tool{who}x{i} for step {i}"
        turn = sent(lambda: m.add_turn(f"s{who}", "user", text, idempotency_key=f"{who}-{i}")).turn_id
        log.write(json.dumps(["turn", turn, text, time.time()]) + "\n")
        if i % 10 == 0:
            again = sent(lambda: m.add_turn(f"s{who}", "user", text, idempotency_key=f"{who}-{i}")).turn_id
            assert again == turn, (again, turn)
        fact = f"writer {who} fact {i}: module m{who}q{i} is owned by team t{who}q{i}"
        kept = sent(lambda: m.remember(fact, kind="fact")).memory_id
        log.write(json.dumps(["memory", kept, fact, time.time()]) + "\n")
        for _ in range(2 if i % 10 == 0 else 1):
            sent(lambda: m.record_tool_call(f"tool{who}", {"i": i}, success=True, task_id=f"task-{who}",
                                            idempotency_key=f"{who}-r{i}"))
        log.write(json.dumps(["record", i, f"tool{who}", time.time()]) + "\n")
"""

READER = r"""
import json, os, sys, time
import aircher_mem as am
from aircher_mem.config import StorePolicy
from aircher_mem.errors import StoreError
url, root, out, stop = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
os.makedirs(root, exist_ok=True)
seen = {}
recalls = 0
with am.Memory.open(root, policy=am.Policy(store=StorePolicy(url=url, lock_seconds=120))) as m:
    while not os.path.exists(stop):
        try:
            m.recall("which tool for the step?")
        except StoreError:
            time.sleep(0.2)
            continue
        recalls += 1
        now = time.time()
        for turn in m.longterm._turns.keys() - seen.keys():
            seen[turn] = now
json.dump({"seen": seen, "recalls": recalls}, open(out, "w"))
"""


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else float("nan")


def lines(path: Path) -> int:
    return path.read_text().count("\n") if path.exists() else 0


def run(url: str, folder: Path, args: argparse.Namespace, cluster: Path | None) -> dict[str, object]:
    python = sys.executable
    stop = folder / "stop"
    reader = subprocess.Popen([python, "-c", READER, url, str(folder / "reader"), str(folder / "seen.json"), str(stop)])
    writers = [
        subprocess.Popen(
            [python, "-c", WRITER, url, str(w), str(args.turns), str(folder / f"w{w}"), str(folder / f"{w}.log")]
        )
        for w in range(args.writers)
    ]
    victim = None
    if args.kill:
        victim = subprocess.Popen(
            [python, "-c", WRITER, url, "k", str(args.turns), str(folder / "wk"), str(folder / "k.log")]
        )
    started = time.perf_counter()
    events = []
    if args.kill:
        expected = 3 * args.turns  # lines a writer logs
        while lines(folder / "0.log") < expected // 3 and writers[0].poll() is None:
            time.sleep(0.2)
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        events.append(f"writer k killed at {time.perf_counter() - started:.1f} s")
        while lines(folder / "0.log") < expected // 2 and writers[0].poll() is None:
            time.sleep(0.2)
        assert cluster is not None
        pg_cluster.kill(cluster)
        down = time.perf_counter()
        time.sleep(2.0)
        pg_cluster.restart(cluster)
        events.append(f"server killed at {down - started:.1f} s, up again {time.perf_counter() - down:.1f} s later")
    for w in writers:
        if w.wait() != 0:
            raise SystemExit(f"a writer failed (exit {w.returncode})")
    seconds = time.perf_counter() - started
    stop.touch()
    reader.wait()
    acked: list[tuple[str, int, str, float]] = []
    for log in sorted(folder.glob("*.log")):
        acked.extend(tuple(json.loads(line)) for line in log.read_text().splitlines() if line.strip())  # type: ignore[misc]
    with psycopg.connect(url) as con:
        turns = dict(con.execute("SELECT id, text FROM turns").fetchall())
        memories = dict(con.execute("SELECT id, content FROM memories").fetchall())
        doubled_turns = con.execute("SELECT count(*) FROM (SELECT text FROM turns GROUP BY text HAVING count(*) > 1) d")
        doubled_turns = doubled_turns.fetchone()[0]
        records = {
            (name, int(i)): n
            for name, i, n in con.execute(
                "SELECT tool_name, parameters::json ->> 'i', count(*) FROM tool_executions GROUP BY 1, 2"
            ).fetchall()
        }
        usage = dict(con.execute("SELECT task_id, tools_used::text FROM task_history").fetchall())
        doubled_facts = con.execute(
            "SELECT count(*) FROM (SELECT content FROM memories WHERE content LIKE 'writer % fact %' "
            "GROUP BY content HAVING count(*) > 1) d"
        ).fetchone()[0]
    lost = [
        a
        for a in acked
        if (
            records.get((a[2], a[1])) is None
            if a[0] == "record"
            else (turns if a[0] == "turn" else memories).get(a[1]) != a[2]
        )
    ]
    counted = sum(sum(json.loads(tools).values()) for tools in usage.values())
    seen = {int(k): v for k, v in json.loads((folder / "seen.json").read_text())["seen"].items()}
    recalls = json.loads((folder / "seen.json").read_text())["recalls"]
    lags = [max(0.0, seen[a[1]] - a[3]) for a in acked if a[0] == "turn" and a[1] in seen]
    unseen = sum(1 for a in acked if a[0] == "turn" and a[1] not in seen)
    main = [a for a in acked if not (str(a[2]).startswith("writer k ") or a[2] == "toolk")]
    return {
        "writers": args.writers,
        "acknowledged": len(acked),
        "of them by the killed writer": len(acked) - len(main),
        "turns on the server": len(turns),
        "memories on the server": len(memories),
        "records on the server": sum(records.values()),
        "lost": len(lost),
        "turn texts stored twice": doubled_turns,
        "facts stored twice": doubled_facts,
        "records stored twice": sum(1 for n in records.values() if n > 1),
        "tool calls the tasks count": counted,
        "seconds": round(seconds, 1),
        "writes per second": round(len(main) / seconds, 1),
        "reader recalls": recalls,
        "lag p50 ms": round(1000 * quantile(lags, 0.5), 1),
        "lag p95 ms": round(1000 * quantile(lags, 0.95), 1),
        "lag max ms": round(1000 * max(lags, default=math.nan), 1),
        "acknowledged turns the reader never saw": unseen,
        "events": events,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--kill", action="store_true", help="kill a writer, then the server, midway")
    parser.add_argument("--url", help="a server's database to create the run's database from")
    args = parser.parse_args()
    if args.kill and args.url:
        raise SystemExit("--kill needs the private cluster: leave --url out")
    with pg_cluster.scratch(args.url, private=args.kill) as (url, cluster), tempfile.TemporaryDirectory() as folder:
        report = run(url, Path(folder), args, cluster)
    for key, value in report.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
