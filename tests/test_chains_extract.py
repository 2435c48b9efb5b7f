"""Decisions with their reasons, consequences and constraints, read from turns."""

from __future__ import annotations

import dataclasses
import time

import pytest
from aircher_mem.config import ChainsPolicy
from aircher_mem.longterm.chains_extract import (
    EDGES,
    KINDS,
    DecisionCandidate,
    Link,
    decisions_in,
)
from hypothesis import given, settings
from hypothesis import strategies as st

S = ChainsPolicy()

# (text, expected [(decision, [(kind, edge, strength, link text), ...]), ...])
TABLE = [
    # "keep", "make" and "used" choosing a thing (not encouragement, not a habit)
    (
        "Let's keep using Redis since it is already deployed.",
        [("Let's keep using Redis", [("reason", "justifies", S.since, "it is already deployed")])],
    ),
    (
        "We'll keep that flag because the old clients need it.",
        [("We'll keep that flag", [("reason", "justifies", S.explicit, "the old clients need it")])],
    ),
    (
        "We made a breaking change to the API because v1 was unusable.",
        [("We made a breaking change to the API", [("reason", "justifies", S.explicit, "v1 was unusable")])],
    ),
    (
        "We used Postgres for the queue because it was already there.",
        [("We used Postgres for the queue", [("reason", "justifies", S.explicit, "it was already there")])],
    ),
    # one thing kept over another: the sentence after it may be its reason; "two
    # reasons" after a colon is no heading, "instead of" in a reason no decision
    (
        "We'll keep versioning in the URL path rather than headers. It's visible in access logs.",
        [
            (
                "We'll keep versioning in the URL path rather than headers",
                [("reason", "justifies", S.adjacent, "It's visible in access logs")],
            )
        ],
    ),
    (
        "I replaced flake8, black and isort with ruff. Two reasons: first, it runs in under a second; second, "
        "it's one config file instead of three.",
        [
            (
                "I replaced flake8, black and isort with ruff",
                [
                    (
                        "reason",
                        "justifies",
                        S.follow,
                        "it runs in under a second; second, it's one config file instead of three",
                    )
                ],
            )
        ],
    ),
    # a heading before a colon, not a decision: what follows starts afresh
    (
        "Quick summary of the call: we ruled out MongoDB for the analytics store due to the lack of joins.",
        [
            (
                "we ruled out MongoDB for the analytics store",
                [("reason", "justifies", S.explicit, "the lack of joins")],
            )
        ],
    ),
    # "let's" with a verb of making; a semicolon before the reason; a refusal and the
    # sentence after it; "otherwise"
    (
        "Let's write the ingest service in Go, since it has to hold 20k websocket connections.",
        [
            (
                "Let's write the ingest service in Go",
                [("reason", "justifies", S.since, "it has to hold 20k websocket connections")],
            )
        ],
    ),
    (
        "We're sticking with the weekly release train; QA only has capacity for one regression pass a week.",
        [
            (
                "We're sticking with the weekly release train",
                [("reason", "justifies", S.colon, "QA only has capacity for one regression pass a week")],
            )
        ],
    ),
    (
        "We won't add websockets for notifications yet. Polling every 30s is fine for the current 200 users.",
        [
            (
                "We won't add websockets for notifications yet",
                [("reason", "justifies", S.adjacent, "Polling every 30s is fine for the current 200 users")],
            )
        ],
    ),
    (
        "We commit poetry.lock even for the library, otherwise CI and local installs resolve different versions.",
        [
            (
                "We commit poetry.lock even for the library",
                [("reason", "justifies", S.purpose, "CI and local installs resolve different versions")],
            )
        ],
    ),
    # chat shorthand; a dash before the reason
    (
        "went w/ pnpm bc installs are faster",
        [("went with pnpm", [("reason", "justifies", S.explicit, "installs are faster")])],
    ),
    (
        "we banned any in the eslint config - it kept sneaking into API response types",
        [
            (
                "we banned any in the eslint config",
                [("reason", "justifies", S.colon, "it kept sneaking into API response types")],
            )
        ],
    ),
    # the answer to a question why it was done; "two reasons: first, ..."
    (
        "We dropped the develop branch.\nWhat prompted that?\nRelease branches were diverging for weeks.",
        [
            (
                "We dropped the develop branch",
                [("reason", "justifies", S.follow, "Release branches were diverging for weeks")],
            )
        ],
    ),
    (
        "Picked MkDocs for the docs site.\nAny particular reason?\nEveryone already writes Markdown.",
        [("Picked MkDocs for the docs site", [("reason", "justifies", S.follow, "Everyone already writes Markdown")])],
    ),
    (
        "I replaced flake8 with ruff. Two reasons: first, it runs in under a second; second, it is one config file.",
        [
            (
                "I replaced flake8 with ruff",
                [("reason", "justifies", S.follow, "it runs in under a second; second, it is one config file")],
            )
        ],
    ),
    # a rule from here on; a setting as it is now, with the answer to why; "--"
    (
        "From now on all infra changes go through Terraform. We had a security group opened by hand.",
        [
            (
                "From now on all infra changes go through Terraform",
                [("reason", "justifies", S.adjacent, "We had a security group opened by hand")],
            )
        ],
    ),
    (
        "mypy is now a required check on main.\nWhat changed?\nTyping errors were piling up as warnings.",
        [
            (
                "mypy is now a required check on main",
                [("reason", "justifies", S.follow, "Typing errors were piling up as warnings")],
            )
        ],
    ),
    (
        "moved user uploads from S3 to R2 -- egress was 60% of our AWS bill",
        [("moved user uploads from S3 to R2", [("reason", "justifies", S.colon, "egress was 60% of our AWS bill")])],
    ),
    # a setting changed, told as done, and the sentence after it
    (
        "I turned off Dependabot auto-merge. It merged a breaking axios update last week.",
        [
            (
                "I turned off Dependabot auto-merge",
                [("reason", "justifies", S.adjacent, "It merged a breaking axios update last week")],
            )
        ],
    ),
    (
        "We reverted to sync workers since half our libraries are blocking.",
        [("We reverted to sync workers", [("reason", "justifies", S.since, "half our libraries are blocking")])],
    ),
    # "because": explicit
    (
        "We went with Redis because latency matters.",
        [("We went with Redis", [("reason", "justifies", S.explicit, "latency matters")])],
    ),
    (
        "We chose Postgres over MySQL because we need JSONB.",
        [("We chose Postgres over MySQL", [("reason", "justifies", S.explicit, "we need JSONB")])],
    ),
    (
        "We're going with Kafka due to the replay requirement.",
        [("We're going with Kafka", [("reason", "justifies", S.explicit, "the replay requirement")])],
    ),
    # a choice announced in the present progressive
    (
        "We're moving the docs from Sphinx to MkDocs because nobody wants to write reStructuredText.",
        [
            (
                "We're moving the docs from Sphinx to MkDocs",
                [("reason", "justifies", S.explicit, "nobody wants to write reStructuredText")],
            )
        ],
    ),
    (
        "We are switching the runners to ARM since they cost less.",
        [("We are switching the runners to ARM", [("reason", "justifies", S.since, "they cost less")])],
    ),
    # a routine verb counts with a reason
    (
        "We use Alembic because it autogenerates migrations.",
        [("We use Alembic", [("reason", "justifies", S.explicit, "it autogenerates migrations")])],
    ),
    # "so": a consequence
    (
        "We switched to ruff, so the CI lint step takes seconds.",
        [("We switched to ruff", [("consequence", "leads_to", S.consequence, "the CI lint step takes seconds")])],
    ),
    (
        "I pinned the base image, which means rebuilds are reproducible.",
        [("I pinned the base image", [("consequence", "leads_to", S.consequence, "rebuilds are reproducible")])],
    ),
    # a constraint blocks the alternative
    (
        "We can't use Docker since the build hosts are locked down.",
        [("We can't use Docker", [("constraint", "blocks", S.since, "the build hosts are locked down")])],
    ),
    (
        "We have to support Python 3.9 because the customer's servers run RHEL 8.",
        [
            (
                "We have to support Python 3.9",
                [("constraint", "blocks", S.explicit, "the customer's servers run RHEL 8")],
            )
        ],
    ),
    # "decided to ... since / as / given"
    (
        "We decided to use pytest since the team knows it.",
        [("We decided to use pytest", [("reason", "justifies", S.since, "the team knows it")])],
    ),
    (
        "We decided to vendor the SDK as it is not on PyPI.",
        [("We decided to vendor the SDK", [("reason", "justifies", S.since, "it is not on PyPI")])],
    ),
    (
        "We decided on SQLite given that the app is single-user.",
        [("We decided on SQLite", [("reason", "justifies", S.since, "the app is single-user")])],
    ),
    # the reason first
    (
        "The old client leaked connections, which is why we moved to httpx.",
        [("we moved to httpx", [("reason", "justifies", S.explicit, "The old client leaked connections")])],
    ),
    (
        "The builds kept timing out, so we moved CI to larger runners.",
        [("we moved CI to larger runners", [("reason", "causes", S.cause, "The builds kept timing out")])],
    ),
    (
        "The builds kept timing out. So we moved CI to larger runners.",
        [("we moved CI to larger runners", [("reason", "causes", S.cause, "The builds kept timing out")])],
    ),
    (
        "Because the API is public, we version it in the path.",
        [("we version it in the path", [("reason", "justifies", S.explicit, "the API is public")])],
    ),
    (
        "Given that we deploy ten times a day, we opted for feature flags.",
        [("we opted for feature flags", [("reason", "justifies", S.since, "we deploy ten times a day")])],
    ),
    # purpose
    (
        "To avoid flaky tests we run them serially.",
        [("we run them serially", [("reason", "justifies", S.purpose, "avoid flaky tests")])],
    ),
    (
        "Let's standardize on UTF-8 so that the Windows builds stop mangling file names.",
        [
            (
                "Let's standardize on UTF-8",
                [("reason", "justifies", S.purpose, "the Windows builds stop mangling file names")],
            )
        ],
    ),
    (
        "We dropped the ORM; otherwise every report query needed raw SQL.",
        [("We dropped the ORM", [("reason", "justifies", S.purpose, "every report query needed raw SQL")])],
    ),
    # "; the reason is", ": ..."
    (
        "We kept the sync API; the reason is that most callers are scripts.",
        [("We kept the sync API", [("reason", "justifies", S.explicit, "most callers are scripts")])],
    ),
    (
        "We ended up with Poetry: the lock file is cross-platform.",
        [("We ended up with Poetry", [("reason", "justifies", S.colon, "the lock file is cross-platform")])],
    ),
    (
        "We moved the cron jobs to Celery after the server restarts kept dropping scheduled runs.",
        [
            (
                "We moved the cron jobs to Celery",
                [("reason", "causes", S.cause, "the server restarts kept dropping scheduled runs")],
            )
        ],
    ),
    # several links, in text order
    (
        "We went with Redis because latency matters, so sessions are fast.",
        [
            (
                "We went with Redis",
                [
                    ("reason", "justifies", S.explicit, "latency matters"),
                    ("consequence", "leads_to", S.consequence, "sessions are fast"),
                ],
            )
        ],
    ),
    # hedged
    (
        "We went with Redis, probably because it was already running.",
        [("We went with Redis", [("reason", "justifies", S.hedged, "it was already running")])],
    ),
    # the next sentence
    (
        "We picked Redis. The main reason was latency.",
        [("We picked Redis", [("reason", "justifies", S.follow, "latency")])],
    ),
    (
        "We went with Postgres. Mainly because of JSONB.",
        [("We went with Postgres", [("reason", "justifies", S.follow, "JSONB")])],
    ),
    (
        "We picked Redis. That means we need a second container in dev.",
        [("We picked Redis", [("consequence", "leads_to", S.follow, "we need a second container in dev")])],
    ),
    (
        "We chose gRPC. I think it's because of streaming.",
        [("We chose gRPC", [("reason", "justifies", S.hedged, "streaming")])],
    ),
    (
        "We can't drop Python 3.8. The reason is that the biggest customer runs CentOS 7.",
        [("We can't drop Python 3.8", [("constraint", "blocks", S.follow, "the biggest customer runs CentOS 7")])],
    ),
    # a question between a decision and its reason, one turn a line
    (
        "We went with Postgres.\nwhy not Mongo?\nThat's because our data is relational.",
        [("We went with Postgres", [("reason", "justifies", S.follow, "our data is relational")])],
    ),
    # an explicit choice alone, and with the sentence after it in the same turn
    ("We picked Redis.", [("We picked Redis", [])]),
    (
        "We decided against GraphQL. All the clients are ours.",
        [("We decided against GraphQL", [("reason", "justifies", S.adjacent, "All the clients are ours")])],
    ),
    ("We went with Redis. I'll write the compose file next.", [("We went with Redis", [])]),
    ("We went with Redis.\nAll the clients are ours.", [("We went with Redis", [])]),
    # "the decision was", "Decision:"
    (
        "The decision was to keep MySQL because migrating costs a month.",
        [("The decision was to keep MySQL", [("reason", "justifies", S.explicit, "migrating costs a month")])],
    ),
    (
        "Decision: use Redis because it's fast.",
        [("Decision: use Redis", [("reason", "justifies", S.explicit, "it's fast")])],
    ),
    # a subject left out; fillers trimmed
    (
        "Turned on WAL mode because readers were blocking the writer.",
        [("Turned on WAL mode", [("reason", "justifies", S.explicit, "readers were blocking the writer")])],
    ),
    (
        "Ok, so we went with Redis because latency matters.",
        [("we went with Redis", [("reason", "justifies", S.explicit, "latency matters")])],
    ),
    # how a thing is made or kept, with its reason
    (
        "The CLI is written in Go so we can ship a single static binary.",
        [("The CLI is written in Go", [("reason", "justifies", S.purpose, "we can ship a single static binary")])],
    ),
    (
        "Exports are stored in S3 since they can reach several gigabytes.",
        [("Exports are stored in S3", [("reason", "justifies", S.since, "they can reach several gigabytes")])],
    ),
    (
        "The settings are kept in TOML so users can add comments.",
        [("The settings are kept in TOML", [("reason", "justifies", S.purpose, "users can add comments")])],
    ),
    # an answer picking one of the options a question offered: the option, for what
    # the question asks; its reason in the rest of the sentence, or the next one
    (
        "Webpack or Vite for the admin app?\nVite. Cold starts take under a second.",
        [
            (
                "Vite — Webpack or Vite for the admin app",
                [("reason", "justifies", S.adjacent, "Cold starts take under a second")],
            )
        ],
    ),
    (
        "Should the email jobs run on Celery or RQ?\nRQ, since we only need one queue.",
        [
            (
                "RQ — Should the email jobs run on Celery or RQ",
                [("reason", "justifies", S.since, "we only need one queue")],
            )
        ],
    ),
    (
        "are we exposing the catalog over REST or GraphQL\nREST - the partners only know REST.",
        [
            (
                "REST — are we exposing the catalog over REST or GraphQL",
                [("reason", "justifies", S.colon, "the partners only know REST")],
            )
        ],
    ),
    (
        "One repo or separate repos for the clients?\nOne repo, because the clients share the API types.",
        [
            (
                "One repo — One repo or separate repos for the clients",
                [("reason", "justifies", S.explicit, "the clients share the API types")],
            )
        ],
    ),
    # two decisions
    (
        "We picked Redis because it is fast. We dropped Memcached since nobody maintains the client.",
        [
            ("We picked Redis", [("reason", "justifies", S.explicit, "it is fast")]),
            ("We dropped Memcached", [("reason", "justifies", S.since, "nobody maintains the client")]),
        ],
    ),
]


def shape(found: list[DecisionCandidate]) -> list[tuple[str, list[tuple[str, str, float, str]]]]:
    return [(c.decision, [(k.kind, k.edge, k.strength, k.text) for k in c.links]) for c in found]


@pytest.mark.parametrize(("text", "expected"), TABLE, ids=[t for t, _ in TABLE])
def test_decisions(text: str, expected: list[tuple[str, list[tuple[str, str, float, str]]]]) -> None:
    assert shape(decisions_in(text)) == expected


def test_candidate_keeps_its_sentence() -> None:
    assert decisions_in("Hi there. We went with Redis because latency matters.\n") == [
        DecisionCandidate(
            decision="We went with Redis",
            links=(Link("reason", "latency matters", "justifies", 0.9),),
            sentence="We went with Redis because latency matters.",
        )
    ]


@pytest.mark.parametrize(
    "text",
    [
        # causal chatter: nobody chose anything
        "It crashed because the file was missing.",
        "The deploy failed because the migration timed out.",
        "The tests failed because we use an old driver.",
        "The API returns 401 because the access token expired, so the client has to refresh it.",
        "The query is slow because there's no index, which is why the page times out.",
        "Since we moved to Postgres, the tests are slower.",
        "Since the upgrade, the dashboard loads in 2 seconds instead of 5, so users are happier.",
        "I ran the benchmark twice since the first run was on a busy machine.",
        "Sure, I'll check the CI logs first since the failure only shows up there.",
        "We moved on because it was late.",
        # questions
        "Why did we go with Redis because of latency?",
        "Should we switch to Postgres because of the locking issues?",
        "Did we pick Redis?",
        # proposals and undecided talk
        "We should use Redis because it's fast.",
        "I'd go with Redis because it's fast.",
        "We haven't decided yet whether to use Redis.",
        "We talked about Redis versus Memcached but didn't settle anything.",
        # where something is, said without a reason
        "The report is written in the tmp folder and deleted after the upload finishes.",
        # an option picked with no reason, or an answer that picks neither
        "Tea or coffee before the standup?\nCoffee.",
        "Is this test flaky or is CI just slow today?\nCI is slow today. The runners are queued behind a release.",
        "Webpack or Vite?\nVitest is failing again.",
        # a routine verb with no reason
        "We use Redis.",
        "We use Redis. It's fast.",
        "I added a log line.",
        # work reported, not a decision; a question why about no decision
        "I added a log line. It prints the request id.",
        "I added a test. I will push it after lunch.",
        "The build is slow.\nWhy?\nThe cache is cold.",
        "The cache is now warm.",
        # a refusal followed by something else to do; a chore; two facts joined
        "We won't add websockets. Let me check the logs.",
        "Note: we use Redis.",
        "Heads up: I added a test.",
        "Let's check the logs.",
        "I will commit the fix now.",
        "The tests pass; the build is green.",
        # encouragement in a choice's words, and a habit of the past
        "Let's keep going and chase our dreams!",
        "Let's keep movin' forward!",
        "Let's make a difference together.",
        "Yeah, let's do it, John! Working together, we can bring positive changes to the neighborhood.",
        "Thanks! I'll do my best to make sure these kids have a safe and loving home.",
        "Let's keep spreading kindness. It's awesome to know we can bring joy to those who need it.",
        "We'll make it through this - hang in there!",
        "I used to compete in a few dance shows - my favourite was the regionals at fifteen.",
        # nothing
        "",
        "   \n\n  ",
        "thanks!",
    ],
)
def test_no_decision(text: str) -> None:
    assert decisions_in(text) == []


@pytest.mark.parametrize("value", [None, 3, b"we chose x because y", ["we chose x because y"]])
def test_not_a_string_gives_nothing(value: object) -> None:
    assert decisions_in(value) == []  # type: ignore[arg-type]


def test_settings_set_the_strengths() -> None:
    mine = dataclasses.replace(S, explicit=0.95, hedged=0.3)
    assert shape(decisions_in("We went with Redis because latency matters.", settings=mine)) == [
        ("We went with Redis", [("reason", "justifies", 0.95, "latency matters")])
    ]
    assert shape(decisions_in("We went with Redis, maybe because it was running.", settings=mine)) == [
        ("We went with Redis", [("reason", "justifies", 0.3, "it was running")])
    ]


def test_only_the_scanned_prefix_is_read() -> None:
    text = "x\n" * 5000 + "We went with Redis because latency matters."
    assert decisions_in(text) == []
    assert len(decisions_in(text, settings=dataclasses.replace(S, scan_chars=20_000))) == 1


def test_texts_are_cut() -> None:
    long = "We went with Redis because " + "latency " * 200 + "matters."
    (found,) = decisions_in(long)
    assert len(found.links[0].text) <= S.text_chars


def test_settings_are_documented_in_range() -> None:
    for field in dataclasses.fields(ChainsPolicy):
        value = getattr(S, field.name)
        if isinstance(value, float):
            assert 0.0 <= value <= 1.0, field.name
    assert S.hedged < S.consequence < S.since < S.explicit


def assert_well_formed(text: str, found: list[DecisionCandidate]) -> None:
    assert isinstance(found, list)
    for c in found:
        assert isinstance(c, DecisionCandidate)
        assert c.decision and c.decision == " ".join(c.decision.split())
        assert len(c.decision) <= S.text_chars
        assert c.links or c.decision  # an explicit choice may stand alone
        for link in c.links:
            assert link.kind in KINDS and link.edge in EDGES
            assert 0.0 <= link.strength <= 1.0
            assert link.text and len(link.text) <= S.text_chars
            assert (link.kind, link.edge) in {
                ("reason", "justifies"),
                ("reason", "causes"),
                ("consequence", "leads_to"),
                ("constraint", "blocks"),
            }


WORDS = st.sampled_from(
    "we I the team let's decided chose went with use can't have to because since as given so that which is why "
    "means the reason is to avoid otherwise after rather than instead of . , ; : ? ! \n Redis latency "
    "probably maybe That's Mainly The main reason was Decision: \ud800 \x00 é ’ 😀".split(" ")
)


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, max_size=80).map(" ".join))
def test_never_raises_on_rule_words(text: str) -> None:
    found = decisions_in(text)
    assert_well_formed(text, found)
    assert decisions_in(text) == found  # deterministic


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    found = decisions_in(text)
    assert_well_formed(text, found)
    assert decisions_in(text) == found


@pytest.mark.parametrize(
    "text",
    [
        "a" * 1_000_000,
        "we " * 400_000,
        "we chose x because " * 60_000,
        "because " * 130_000,
        ", so " * 250_000,
        "\ud800" * 1_000_000,
        "\x00" * 1_000_000,
        "We picked Redis.\n" * 70_000,
        "ok, " * 300_000 + "we went with Redis",
        "we moved x after a b c d " * 40_000,
    ],
    ids=lambda t: repr(t[:16]),
)
def test_bounded_time_on_hostile_input(text: str) -> None:
    start = time.perf_counter()
    assert_well_formed(text, decisions_in(text))
    assert time.perf_counter() - start < 1.0
