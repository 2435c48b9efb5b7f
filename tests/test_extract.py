"""The heuristic extractor of long-term memory and its optional LLM half."""

from __future__ import annotations

import json
import threading
import time

import pytest
from aircher_mem.config import LongtermPolicy
from aircher_mem.longterm.extract import (
    CATEGORIES,
    KINDS,
    Candidate,
    combine,
    extract,
    jaccard,
    normalize,
    run_llm,
    token_set,
)
from hypothesis import given, settings
from hypothesis import strategies as st

# (turn, extract() keywords, expected candidates as
#  (content, kind, category, slot, value, rules, importance, tags))
TABLE = [
    (
        "My editor is Emacs.",
        {},
        [
            (
                "My editor is Emacs.",
                "fact",
                "preference",
                ("user", "editor"),
                "emacs",
                ("preference.setting",),
                0,
                ("preference",),
            )
        ],
    ),
    (
        "I prefer tabs",
        {},
        [
            (
                "I prefer tabs",
                "fact",
                "preference",
                ("user", "indentation"),
                "tabs",
                ("preference.prefer",),
                0,
                ("preference",),
            )
        ],
    ),
    (
        "I now prefer spaces",
        {},
        [
            (
                "I now prefer spaces",
                "fact",
                "preference",
                ("user", "indentation"),
                "spaces",
                ("preference.prefer", "state_change.now"),
                0,
                ("preference", "state_change"),
            )
        ],
    ),
    (
        "The database is Postgres",
        {},
        [
            (
                "The database is Postgres",
                "fact",
                "project",
                ("project", "database"),
                "postgres",
                ("project.setting",),
                0,
                ("project",),
            )
        ],
    ),
    (
        "We moved to MySQL last week",
        {},
        [
            (
                "We moved to MySQL last week",
                "fact",
                "state_change",
                ("project", "database"),
                "mysql",
                ("event.dated", "state_change.switched"),
                0,
                ("event", "state_change"),
            )
        ],
    ),
    (
        "My name is Alex",
        {},
        [("My name is Alex", "fact", "identity", ("user", "name"), "alex", ("identity.name",), 1, ("identity",))],
    ),
    (
        "I live in Boston now",
        {"speaker": "Caroline"},
        [
            (
                "I live in Boston now",
                "fact",
                "personal",
                ("caroline", "location"),
                "boston",
                ("personal.location", "state_change.now"),
                0,
                ("personal", "state_change"),
            )
        ],
    ),
    (
        "We use pytest for tests.",
        {},
        [
            (
                "We use pytest for tests.",
                "fact",
                "project",
                ("project", "test_runner"),
                "pytest",
                ("project.uses",),
                0,
                ("project",),
            )
        ],
    ),
    (
        "We use Redis for caching.",
        {},
        [("We use Redis for caching.", "fact", "project", None, None, ("project.uses",), 0, ("project",))],
    ),
    (
        "The project uses Poetry.",
        {},
        [
            (
                "The project uses Poetry.",
                "fact",
                "project",
                ("project", "package_manager"),
                "poetry",
                ("project.uses",),
                0,
                ("project",),
            )
        ],
    ),
    (
        "Our database is PostgreSQL.",
        {},
        [
            (
                "Our database is PostgreSQL.",
                "fact",
                "project",
                ("project", "database"),
                "postgres",
                ("project.setting",),
                0,
                ("project",),
            )
        ],
    ),
    (
        "The tests run with `pytest -x`.",
        {},
        [
            (
                "The tests run with `pytest -x`.",
                "fact",
                "project",
                ("project", "test_runner"),
                "pytest",
                ("project.tests",),
                0,
                ("project",),
            )
        ],
    ),
    (
        "The default branch is main.",
        {},
        [
            (
                "The default branch is main.",
                "fact",
                "project",
                ("project", "default_branch"),
                "main",
                ("project.setting",),
                0,
                ("project",),
            )
        ],
    ),
    (
        "We deploy to Fly.io.",
        {},
        [
            (
                "We deploy to Fly.io.",
                "fact",
                "project",
                ("project", "deploy_target"),
                "fly.io",
                ("project.deploy",),
                0,
                ("project",),
            )
        ],
    ),
    (
        "The backend is written in Go.",
        {},
        [
            (
                "The backend is written in Go.",
                "fact",
                "project",
                ("project", "language"),
                "go",
                ("project.fact", "project.language"),
                0,
                ("project",),
            )
        ],
    ),
    (
        "The frontend is written in TypeScript.",
        {},
        [
            (
                "The frontend is written in TypeScript.",
                "fact",
                "project",
                ("project", "frontend_language"),
                "typescript",
                ("project.fact", "project.language"),
                0,
                ("project",),
            )
        ],
    ),
    (
        "ripgrep is written in Rust.",
        {},
        [("ripgrep is written in Rust.", "fact", "project", None, None, ("project.language",), 0, ("project",))],
    ),
    (
        "The config lives in config/app.toml.",
        {},
        [
            (
                "The config lives in config/app.toml.",
                "fact",
                "project",
                ("project", "config_path"),
                "config/app.toml",
                ("project.path",),
                0,
                ("project",),
            )
        ],
    ),
    (
        "The CI pipeline takes about ten minutes.",
        {},
        [
            (
                "The CI pipeline takes about ten minutes.",
                "fact",
                "project",
                None,
                None,
                ("project.fact",),
                0,
                ("project",),
            )
        ],
    ),
    (
        "The tests run with `pytest -x`.",
        {"role": "assistant"},
        [
            (
                "The tests run with `pytest -x`.",
                "fact",
                "project",
                ("project", "test_runner"),
                "pytest",
                ("project.tests",),
                0,
                ("project",),
            )
        ],
    ),
    (
        "Don't touch the migrations folder.",
        {},
        [
            (
                "Don't touch the migrations folder.",
                "fact",
                "instruction",
                None,
                None,
                ("instruction.never",),
                1,
                ("instruction",),
            )
        ],
    ),
    (
        "Never commit to main.",
        {},
        [("Never commit to main.", "fact", "instruction", None, None, ("instruction.never",), 1, ("instruction",))],
    ),
    (
        "Always run the formatter before committing.",
        {},
        [
            (
                "Always run the formatter before committing.",
                "fact",
                "instruction",
                None,
                None,
                ("instruction.always",),
                1,
                ("instruction",),
            )
        ],
    ),
    (
        "Make sure to update the changelog.",
        {},
        [
            (
                "Make sure to update the changelog.",
                "fact",
                "instruction",
                None,
                None,
                ("instruction.make_sure",),
                1,
                ("instruction",),
            )
        ],
    ),
    (
        "Remember that the API is rate limited.",
        {},
        [
            (
                "Remember that the API is rate limited.",
                "fact",
                "instruction",
                None,
                None,
                ("instruction.remember", "project.fact"),
                1,
                ("instruction", "project"),
            )
        ],
    ),
    (
        "Please use tabs.",
        {},
        [
            (
                "Please use tabs.",
                "fact",
                "instruction",
                ("project", "indentation"),
                "tabs",
                ("instruction.imperative",),
                1,
                ("instruction",),
            )
        ],
    ),
    (
        "All commits must be signed.",
        {},
        [
            (
                "All commits must be signed.",
                "fact",
                "instruction",
                None,
                None,
                ("instruction.must",),
                1,
                ("instruction",),
            )
        ],
    ),
    ("Make sure to run the tests.", {"role": "assistant"}, []),
    (
        "We decided to use Postgres because it has JSONB.",
        {},
        [
            (
                "We decided to use Postgres because it has JSONB.",
                "decision",
                "decision",
                ("project", "database"),
                "postgres",
                ("decision.decided", "project.uses"),
                1,
                ("decision", "project"),
            )
        ],
    ),
    (
        "Let's go with pnpm.",
        {},
        [
            (
                "Let's go with pnpm.",
                "decision",
                "decision",
                ("project", "package_manager"),
                "pnpm",
                ("decision.lets",),
                1,
                ("decision",),
            )
        ],
    ),
    (
        "We chose FastAPI over Flask.",
        {},
        [
            (
                "We chose FastAPI over Flask.",
                "decision",
                "decision",
                ("project", "web_framework"),
                "fastapi",
                ("decision.chose",),
                1,
                ("decision",),
            )
        ],
    ),
    (
        "We chose pnpm over npm.",
        {},
        [
            (
                "We chose pnpm over npm.",
                "decision",
                "decision",
                ("project", "package_manager"),
                "pnpm",
                ("decision.chose",),
                1,
                ("decision",),
            )
        ],
    ),
    (
        "I decided to take a break from coding because I was burning out.",
        {},
        [
            (
                "I decided to take a break from coding because I was burning out.",
                "decision",
                "decision",
                None,
                None,
                ("decision.decided",),
                1,
                ("decision",),
            )
        ],
    ),
    (
        "We switched from MySQL to Postgres.",
        {},
        [
            (
                "We switched from MySQL to Postgres.",
                "fact",
                "state_change",
                ("project", "database"),
                "postgres",
                ("state_change.switched",),
                0,
                ("state_change",),
            )
        ],
    ),
    (
        "The default branch changed to main.",
        {},
        [
            (
                "The default branch changed to main.",
                "fact",
                "state_change",
                ("project", "default_branch"),
                "main",
                ("state_change.changed",),
                0,
                ("state_change",),
            )
        ],
    ),
    (
        "I no longer use vim.",
        {},
        [
            (
                "I no longer use vim.",
                "fact",
                "preference",
                ("user", "editor"),
                "not vim",
                ("preference.use", "state_change.no_longer"),
                0,
                ("preference", "state_change"),
            )
        ],
    ),
    (
        "I don't use tabs anymore.",
        {},
        [
            (
                "I don't use tabs anymore.",
                "fact",
                "preference",
                ("user", "indentation"),
                "not tabs",
                ("preference.use", "state_change.no_longer"),
                0,
                ("preference", "state_change"),
            )
        ],
    ),
    (
        "I stopped drinking coffee.",
        {},
        [
            (
                "I stopped drinking coffee.",
                "fact",
                "state_change",
                None,
                None,
                ("state_change.no_longer",),
                0,
                ("state_change",),
            )
        ],
    ),
    (
        "I'm using neovim now.",
        {},
        [
            (
                "I'm using neovim now.",
                "fact",
                "preference",
                ("user", "editor"),
                "neovim",
                ("preference.use", "state_change.now"),
                0,
                ("preference", "state_change"),
            )
        ],
    ),
    (
        "I'm 32 years old.",
        {},
        [("I'm 32 years old.", "fact", "identity", ("user", "age"), "32", ("identity.age",), 1, ("identity",))],
    ),
    (
        "My pronouns are they/them.",
        {},
        [
            (
                "My pronouns are they/them.",
                "fact",
                "identity",
                ("user", "pronouns"),
                "they/them",
                ("identity.pronouns",),
                1,
                ("identity",),
            )
        ],
    ),
    (
        "I'm a transgender woman.",
        {"speaker": "Caroline"},
        [("I'm a transgender woman.", "fact", "identity", None, None, ("identity.self",), 1, ("identity",))],
    ),
    (
        "Call me Sam.",
        {},
        [("Call me Sam.", "fact", "identity", ("user", "name"), "sam", ("identity.name",), 1, ("identity",))],
    ),
    (
        "I'm from Sweden.",
        {},
        [
            (
                "I'm from Sweden.",
                "fact",
                "personal",
                ("user", "hometown"),
                "sweden",
                ("personal.hometown",),
                0,
                ("personal",),
            )
        ],
    ),
    (
        "I'm single.",
        {},
        [
            (
                "I'm single.",
                "fact",
                "personal",
                ("user", "relationship_status"),
                "single",
                ("personal.relationship",),
                0,
                ("personal",),
            )
        ],
    ),
    (
        "My birthday is on March 3rd.",
        {},
        [
            (
                "My birthday is on March 3rd.",
                "fact",
                "personal",
                ("user", "birthday"),
                "march 3rd",
                ("event.dated", "personal.birthday"),
                0,
                ("event", "personal"),
            )
        ],
    ),
    (
        "My wife and I have two kids.",
        {},
        [("My wife and I have two kids.", "fact", "personal", None, None, ("personal.family",), 0, ("personal",))],
    ),
    (
        "My dog Rex loves the beach.",
        {},
        [("My dog Rex loves the beach.", "fact", "personal", None, None, ("personal.pet",), 0, ("personal",))],
    ),
    (
        "My best friend is moving away.",
        {},
        [("My best friend is moving away.", "fact", "personal", None, None, ("personal.friends",), 0, ("personal",))],
    ),
    (
        "I'm a software engineer.",
        {},
        [
            (
                "I'm a software engineer.",
                "fact",
                "professional",
                ("user", "job_title"),
                "software engineer",
                ("professional.job_title",),
                0,
                ("professional",),
            )
        ],
    ),
    (
        "I work at Google.",
        {},
        [
            (
                "I work at Google.",
                "fact",
                "professional",
                ("user", "employer"),
                "google",
                ("professional.employer", "professional.work"),
                0,
                ("professional",),
            )
        ],
    ),
    (
        "Lost my job as a banker yesterday, so I'm gonna take a shot at starting my own business.",
        {"speaker": "Jon"},
        [
            (
                "Lost my job as a banker yesterday, so I'm gonna take a shot at starting my own business.",
                "fact",
                "professional",
                None,
                None,
                ("event.dated", "plan.intent", "professional.work"),
                0,
                ("event", "plan", "professional"),
            )
        ],
    ),
    (
        "Gonna continue my edu and check out career options, which is pretty exciting!",
        {"speaker": "Caroline"},
        [
            (
                "Gonna continue my edu and check out career options, which is pretty exciting!",
                "fact",
                "professional",
                None,
                None,
                ("plan.intent", "professional.study", "professional.work"),
                0,
                ("plan", "professional"),
            )
        ],
    ),
    (
        "I'm allergic to peanuts.",
        {},
        [("I'm allergic to peanuts.", "fact", "health", None, None, ("health.allergy",), 0, ("health",))],
    ),
    ("I'm vegan.", {}, [("I'm vegan.", "fact", "health", ("user", "diet"), "vegan", ("health.diet",), 0, ("health",))]),
    (
        "I was diagnosed with asthma as a kid.",
        {},
        [
            (
                "I was diagnosed with asthma as a kid.",
                "fact",
                "health",
                None,
                None,
                ("health.condition",),
                0,
                ("health",),
            )
        ],
    ),
    (
        "I'm doing kickboxing and it's giving me so much energy.",
        {"speaker": "John"},
        [
            (
                "I'm doing kickboxing and it's giving me so much energy.",
                "fact",
                "health",
                None,
                None,
                ("health.exercise",),
                0,
                ("health",),
            )
        ],
    ),
    (
        "My favorite color is blue.",
        {},
        [
            (
                "My favorite color is blue.",
                "fact",
                "preference",
                ("user", "favorite_color"),
                "blue",
                ("preference.favorite",),
                0,
                ("preference",),
            )
        ],
    ),
    (
        "I love all dances, but contemporary is my top pick.",
        {"speaker": "Jon"},
        [
            (
                "I love all dances, but contemporary is my top pick.",
                "fact",
                "preference",
                None,
                None,
                ("preference.favorite", "preference.like"),
                0,
                ("preference",),
            )
        ],
    ),
    (
        "I hate driving at night.",
        {},
        [("I hate driving at night.", "fact", "preference", None, None, ("preference.dislike",), 0, ("preference",))],
    ),
    (
        "I'm passionate about dancing.",
        {},
        [
            (
                "I'm passionate about dancing.",
                "fact",
                "preference",
                None,
                None,
                ("activity.hobby", "preference.like"),
                0,
                ("activity", "preference"),
            )
        ],
    ),
    (
        "I'm planning to visit Japan next month.",
        {},
        [
            (
                "I'm planning to visit Japan next month.",
                "fact",
                "plan",
                None,
                None,
                ("plan.future", "plan.intent"),
                0,
                ("plan",),
            )
        ],
    ),
    (
        "We're thinking about going camping next month.",
        {"speaker": "Melanie"},
        [
            (
                "We're thinking about going camping next month.",
                "fact",
                "plan",
                None,
                None,
                ("activity.hobby", "plan.future", "plan.intent"),
                0,
                ("activity", "plan"),
            )
        ],
    ),
    (
        "I went to a LGBTQ support group yesterday and it was so powerful.",
        {"speaker": "Caroline"},
        [
            (
                "I went to a LGBTQ support group yesterday and it was so powerful.",
                "episode",
                "event",
                None,
                None,
                ("event.dated", "event.went"),
                0,
                ("event",),
            )
        ],
    ),
    (
        "I ran a charity race for mental health last Saturday – it was really rewarding.",
        {"speaker": "Melanie"},
        [
            (
                "I ran a charity race for mental health last Saturday – it was really rewarding.",
                "episode",
                "event",
                None,
                None,
                ("event.dated",),
                0,
                ("event",),
            )
        ],
    ),
    (
        "Yeah, I painted that lake sunrise last year!",
        {"speaker": "Melanie"},
        [
            (
                "Yeah, I painted that lake sunrise last year!",
                "episode",
                "event",
                None,
                None,
                ("event.dated",),
                0,
                ("event",),
            )
        ],
    ),
    (
        "Just got back from a family road trip yesterday, it was fun!",
        {"speaker": "John"},
        [
            (
                "Just got back from a family road trip yesterday, it was fun!",
                "episode",
                "event",
                None,
                None,
                ("event.went",),
                0,
                ("event",),
            )
        ],
    ),
    (
        "We visited Paris in 2019.",
        {},
        [("We visited Paris in 2019.", "episode", "event", None, None, ("event.dated", "event.went"), 0, ("event",))],
    ),
    (
        "I've been painting for 7 years.",
        {},
        [
            (
                "I've been painting for 7 years.",
                "fact",
                "activity",
                None,
                None,
                ("activity.duration", "activity.hobby"),
                0,
                ("activity",),
            )
        ],
    ),
    (
        "In my free time I play the guitar.",
        {},
        [("In my free time I play the guitar.", "fact", "activity", None, None, ("activity.hobby",), 0, ("activity",))],
    ),
    (
        "Hey Mel! Good to see you! I'm swamped with the kids & work. What's up with you? Anything new?",
        {"speaker": "Melanie"},
        [("I'm swamped with the kids & work.", "fact", "personal", None, None, ("personal.family",), 0, ("personal",))],
    ),
    (
        "Thanks! We use uv for packaging. Never push to main. What do you think?",
        {},
        [
            (
                "We use uv for packaging.",
                "fact",
                "project",
                ("project", "package_manager"),
                "uv",
                ("project.uses",),
                0,
                ("project",),
            ),
            ("Never push to main.", "fact", "instruction", None, None, ("instruction.never",), 1, ("instruction",)),
        ],
    ),
    (
        "My name is Alex.\nI live in Berlin.\nI prefer spaces.",
        {},
        [
            ("My name is Alex.", "fact", "identity", ("user", "name"), "alex", ("identity.name",), 1, ("identity",)),
            (
                "I live in Berlin.",
                "fact",
                "personal",
                ("user", "location"),
                "berlin",
                ("personal.location",),
                0,
                ("personal",),
            ),
            (
                "I prefer spaces.",
                "fact",
                "preference",
                ("user", "indentation"),
                "spaces",
                ("preference.prefer",),
                0,
                ("preference",),
            ),
        ],
    ),
    (
        "I'm on the payments team.",
        {"speaker": "Dana"},
        [
            (
                "I'm on the payments team.",
                "fact",
                "professional",
                ("dana", "team"),
                "payments",
                ("professional.team",),
                0,
                ("professional",),
            )
        ],
    ),
    ("thanks!", {}, []),
    ("lol", {}, []),
    ("ok sounds good", {}, []),
    ("what do you think about tabs?", {}, []),
    ("Do you prefer tabs?", {}, []),
    ("I'd be happy to help! Let me know if you need anything else.", {"role": "assistant"}, []),
    ("I'll take a look at that file.", {"role": "assistant"}, []),
    ("Sure, I love that idea!", {"role": "assistant"}, []),
    ("It must've been great!", {}, []),
    ("Wow, love that painting!", {}, []),
    ("They're the reason why I never give up.", {}, []),
    ("", {}, []),
    ("   \n\t  ", {}, []),
]

MAX_CONTENT = LongtermPolicy().extract_content_chars


def as_rows(candidates: list[Candidate]) -> list[tuple[object, ...]]:
    return [(c.content, c.kind, c.category, c.slot, c.value, c.rules, c.importance, c.tags) for c in candidates]


@pytest.mark.parametrize(("text", "kwargs", "expected"), TABLE, ids=[f"{i:02d}" for i in range(len(TABLE))])
def test_table(text: str, kwargs: dict[str, str], expected: list[tuple[object, ...]]) -> None:
    assert as_rows(extract(text, **kwargs)) == expected


def test_table_covers_every_category_kind_and_rule() -> None:
    from aircher_mem.longterm.extract import _RULES

    rows = [row for _, _, expected in TABLE for row in expected]
    assert len(TABLE) >= 70
    assert {row[2] for row in rows} == set(CATEGORIES)
    assert {row[1] for row in rows} == set(KINDS)
    assert {rule for row in rows for rule in row[5]} == {rule.id for rule in _RULES}


# (turn, extract() keywords, expected candidates as (content, kind, slot, value))
FACTS = [
    (
        "We use pytest for the tests and the database is Postgres.",
        {},
        [
            ("We use pytest for the tests", "fact", ("project", "test_runner"), "pytest"),
            ("the database is Postgres.", "fact", ("project", "database"), "postgres"),
        ],
    ),
    (
        "We use pytest for tests, the database is Postgres, and CI runs on GitHub Actions.",
        {},
        [
            ("We use pytest for tests", "fact", ("project", "test_runner"), "pytest"),
            ("the database is Postgres", "fact", ("project", "database"), "postgres"),
            ("CI runs on GitHub Actions.", "fact", ("project", "ci"), "github actions"),
        ],
    ),
    (
        "I prefer tabs and we use black.",
        {},
        [
            ("I prefer tabs", "fact", ("user", "indentation"), "tabs"),
            ("we use black.", "fact", ("project", "formatter"), "black"),
        ],
    ),
    (
        "The linter is ruff; we use mypy for types.",
        {},
        [
            ("The linter is ruff", "fact", ("project", "linter"), "ruff"),
            ("we use mypy for types.", "fact", ("project", "type_checker"), "mypy"),
        ],
    ),
    (
        "I use snake_case for functions; we use single quotes.",
        {},
        [
            ("I use snake_case for functions", "fact", ("user", "naming_convention"), "snake_case"),
            ("we use single quotes.", "fact", ("project", "quote_style"), "single quotes"),
        ],
    ),
    (
        "I'm on macOS and I use VS Code.",
        {},
        [
            ("I'm on macOS", "fact", ("user", "os"), "macos"),
            ("I use VS Code.", "fact", ("user", "editor"), "vscode"),
        ],
    ),
    (
        "We write the frontend in TypeScript, also the database is SQLite.",
        {},
        [
            ("We write the frontend in TypeScript", "fact", ("project", "frontend_language"), "typescript"),
            ("the database is SQLite.", "fact", ("project", "database"), "sqlite"),
        ],
    ),
    (
        "We use pytest for the tests and never push to main.",
        {},
        [
            ("We use pytest for the tests", "fact", ("project", "test_runner"), "pytest"),
            ("never push to main.", "fact", None, None),
        ],
    ),
    ("We code in Rust.", {}, [("We code in Rust.", "fact", ("project", "language"), "rust")]),
    # a bare value of another setting is said with the verb before it
    (
        "We use pytest, black and Postgres.",
        {},
        [
            ("We use pytest", "fact", ("project", "test_runner"), "pytest"),
            ("We use black", "fact", ("project", "formatter"), "black"),
            ("We use Postgres.", "fact", ("project", "database"), "postgres"),
        ],
    ),
    (
        "We use Django for the API and React for the frontend.",
        {},
        [
            ("We use Django for the API", "fact", ("project", "web_framework"), "django"),
            ("We use React for the frontend.", "fact", ("project", "frontend_framework"), "react"),
        ],
    ),
    (
        "Let's use uv and GitHub Actions.",
        {},
        [
            ("Let's use uv", "decision", ("project", "package_manager"), "uv"),
            ("Let's use GitHub Actions.", "decision", ("project", "ci"), "github actions"),
        ],
    ),
    # clauses setting the same slot: one memory with the last value
    (
        "I used to use vim but now I use emacs.",
        {},
        [("I used to use vim but now I use emacs.", "fact", ("user", "editor"), "emacs")],
    ),
    # self-introductions: the speaker's name and team
    (
        "Hi, I'm Dana, lead on billing",
        {},
        [
            ("Hi, I'm Dana", "fact", ("user", "name"), "dana"),
            ("lead on billing", "fact", ("user", "team"), "billing"),
        ],
    ),
    (
        "Dana here, I lead billing.",
        {"speaker": "Dana"},
        [
            ("Dana here", "fact", ("dana", "name"), "dana"),
            ("I lead billing.", "fact", ("dana", "team"), "billing"),
        ],
    ),
    ("I am Dana Smith.", {}, [("I am Dana Smith.", "fact", ("user", "name"), "dana smith")]),
    ("I work on billing.", {}, [("I work on billing.", "fact", ("user", "team"), "billing")]),
    ("I'm the billing lead.", {}, [("I'm the billing lead.", "fact", ("user", "team"), "billing")]),
    ("I'm the lead on payments.", {}, [("I'm the lead on payments.", "fact", ("user", "team"), "payments")]),
    ("I own the checkout service.", {}, [("I own the checkout service.", "fact", ("user", "team"), "checkout")]),
    ("I moved to the payments team", {}, [("I moved to the payments team", "fact", ("user", "team"), "payments")]),
    ("I joined the search team.", {}, [("I joined the search team.", "fact", ("user", "team"), "search")]),
    ("My team is infra.", {}, [("My team is infra.", "fact", ("user", "team"), "infra")]),
]


@pytest.mark.parametrize(("text", "kwargs", "expected"), FACTS, ids=[f"{i:02d}" for i in range(len(FACTS))])
def test_one_candidate_per_fact(text: str, kwargs: dict[str, str], expected: list[tuple[object, ...]]) -> None:
    assert [(c.content, c.kind, c.slot, c.value) for c in extract(text, **kwargs)] == expected


# What the clause split and the self-introduction rules must leave alone (the same
# outcome as before them).
UNCHANGED = [
    # one correction: the correction's clauses stay one memory
    (
        "Actually, the database is MySQL, not Postgres.",
        {},
        [("Actually, the database is MySQL, not Postgres.", "fact", ("project", "database"), "mysql")],
    ),
    # a clause without a slot is no fact of its own below three words, and a
    # sentence without a slot is not split
    ("My wife and I live in Boston.", {}, [("My wife and I live in Boston.", "fact", ("user", "location"), "boston")]),
    (
        "I love painting, it's so relaxing and my kids love it too!",
        {},
        [("I love painting, it's so relaxing and my kids love it too!", "fact", None, None)],
    ),
    ("My name is Dana.", {}, [("My name is Dana.", "fact", ("user", "name"), "dana")]),
    # no name, no team
    ("I'm sure", {}, []),
    ("I'm not", {}, []),
    ("I'm fine", {}, []),
    ("I'm looking at the bug", {}, []),
    ("I'm Sure.", {}, []),
    ("Same here.", {}, []),
    ("I'm going to fix it", {}, [("I'm going to fix it", "fact", None, None)]),
    ("I'm French.", {}, []),
    ("I work on weekends.", {}, [("I work on weekends.", "fact", None, None)]),
    ("I own a dog.", {}, []),
    ("I work on Mondays.", {}, [("I work on Mondays.", "fact", None, None)]),
    ("I lead the way.", {}, []),
    ("I lead the effort to migrate.", {}, []),
    ("I'm the tech lead.", {}, []),
    # two values of one setting, or a value after "is", stay one candidate
    ("I prefer tabs and spaces.", {}, [("I prefer tabs and spaces.", "fact", ("user", "indentation"), "tabs")]),
    ("The linter is ruff and mypy.", {}, [("The linter is ruff and mypy.", "fact", ("project", "linter"), "ruff")]),
]


@pytest.mark.parametrize(("text", "kwargs", "expected"), UNCHANGED, ids=[f"{i:02d}" for i in range(len(UNCHANGED))])
def test_what_stays_one_candidate_or_none(
    text: str, kwargs: dict[str, str], expected: list[tuple[object, ...]]
) -> None:
    assert [(c.content, c.kind, c.slot, c.value) for c in extract(text, **kwargs)] == expected


def test_the_callers_slot_pairs() -> None:
    def slot(text: str, **kwargs: str) -> tuple[object, object]:
        (c,) = extract(text, **kwargs)
        return c.slot, c.value

    assert slot("I prefer tabs") == (("user", "indentation"), "tabs")
    assert slot("I now prefer spaces") == (("user", "indentation"), "spaces")
    assert "state_change.now" in extract("I now prefer spaces")[0].rules
    assert slot("The database is Postgres") == (("project", "database"), "postgres")
    assert slot("We moved to MySQL last week") == (("project", "database"), "mysql")
    assert slot("My name is Alex") == (("user", "name"), "alex")
    assert slot("I live in Boston now", speaker="Caroline") == (("caroline", "location"), "boston")


def test_subjects_by_role_and_speaker() -> None:
    assert extract("I prefer tabs.", speaker="  Mary  Ann ")[0].slot == ("mary ann", "indentation")
    assert extract("I prefer tabs.", speaker="")[0].slot == ("user", "indentation")
    assert extract("I prefer tabs.", role="assistant")[0].slot == ("assistant", "indentation")
    assert extract("We prefer tabs.") == []  # a project preference is said with "use"
    assert extract("We use tabs.")[0].slot == ("project", "indentation")


def test_content_is_cut_at_the_policys_content_chars() -> None:
    text = "I prefer tabs " + "x" * 2000
    (c,) = extract(text)
    assert len(c.content) == MAX_CONTENT == 500
    assert text.startswith(c.content)
    (short,) = extract(text, policy=LongtermPolicy(extract_content_chars=40))
    assert short.content == text[:40]


def test_normalize_token_set_jaccard() -> None:
    assert normalize("  Don't   touch MAIN!! ") == "dont touch main"
    assert normalize("config/app.toml, (v1.2)") == "config app toml v1 2"
    assert normalize("I’m — here…") == "im here"
    assert normalize("") == ""
    # The content words as the lexical index sees them: stemmed, stop words out.
    assert token_set("I prefer tabs to the spaces.") == frozenset({"prefer", "tab", "space"})
    assert token_set("the a an") == frozenset()
    a = token_set("We use Postgres for the database")
    b = token_set("The database is Postgres")
    assert a == frozenset({"use", "postgr", "databas"})
    assert b == frozenset({"databas", "postgr"})
    assert jaccard(a, b) == 2 / 3
    # Word forms are one word; identifiers are split into their parts too.
    assert token_set("The servers restarted") == token_set("restarting the server") == frozenset({"server", "restart"})
    assert token_set("edit config/app.toml") == frozenset({"edit", "config", "app", "toml"})
    # A negation the stop words drop still counts, as "not".
    assert token_set("Don't restart the servers") == frozenset({"not", "restart", "server"})
    assert token_set("We don’t deploy on Fridays") == frozenset({"not", "deploy", "friday"})
    assert token_set("no deploys without approval") == frozenset({"not", "deploy", "approv"})
    assert token_set("Nothing to note") == frozenset({"noth", "note"})
    # A redacted secret is one word, not its kind's and hash's parts.
    secret = "[REDACTED:github_token:ba94fef94606]"
    assert token_set(f"CI uses {secret}") == frozenset({"ci", "use", secret})
    assert jaccard(frozenset(), frozenset()) == 0.0
    assert jaccard(frozenset({"x"}), frozenset()) == 0.0
    assert jaccard(a, a) == 1.0


# --- the optional LLM


GOOD = [
    {"content": "User likes JRPGs", "importance": 1, "tags": ["interests", "Preference"], "action": "create"},
    {"content": "Old preference obsolete", "action": "archive"},
    {
        "content": "The  project uses Postgres",
        "kind": "fact",
        "category": "project",
        "slot": ["Project", "Database"],
        "value": "PostgreSQL ",
    },
    {"content": "We chose uv", "kind": "decision", "tags": []},
]


def test_run_llm_good_output() -> None:
    created, archived, error = run_llm(lambda text: GOOD, "turn", timeout=1.0)
    assert error is None
    assert archived == ["Old preference obsolete"]
    assert created == [
        Candidate("User likes JRPGs", "fact", "preference", None, None, ("llm",), 1, ("interests", "preference")),
        Candidate(
            "The project uses Postgres",
            "fact",
            "project",
            ("project", "database"),
            "postgresql",
            ("llm",),
            0,
            ("project",),
        ),
        Candidate("We chose uv", "decision", "decision", None, None, ("llm",), 0, ("decision",)),
    ]


def test_run_llm_passes_the_text_and_accepts_json_text() -> None:
    seen: list[str] = []

    def extractor(text: str) -> str:
        seen.append(text)
        return json.dumps(GOOD[:2])

    created, archived, error = run_llm(extractor, "hello", timeout=1.0)
    assert seen == ["hello"]
    assert (len(created), archived, error) == (1, ["Old preference obsolete"], None)


def test_run_llm_raising_extractor() -> None:
    def boom(text: str) -> object:
        raise RuntimeError("rate limited")

    assert run_llm(boom, "x", timeout=1.0) == ([], [], "llm extractor failed: RuntimeError: rate limited")


def test_run_llm_slow_extractor_times_out() -> None:
    release = threading.Event()

    def slow(text: str) -> object:
        release.wait(2.0)
        return GOOD

    start = time.monotonic()
    created, archived, error = run_llm(slow, "x", timeout=0.1)
    elapsed = time.monotonic() - start
    release.set()
    assert (created, archived) == ([], [])
    assert error is not None and "timeout" in error
    assert elapsed < 1.5  # generous: the call returns at the timeout, not when the LLM does


@pytest.mark.parametrize("timeout", [-1.0, float("nan"), 0.0])
def test_run_llm_bad_timeouts_do_not_raise(timeout: float) -> None:
    created, archived, _ = run_llm(lambda text: [], "x", timeout=timeout)
    assert created == [] and archived == []


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ({"content": "x"}, "llm extractor returned dict, expected a list"),
        (None, "llm extractor returned NoneType, expected a list"),
        (42, "llm extractor returned int, expected a list"),
    ],
)
def test_run_llm_wrong_type(output: object, message: str) -> None:
    assert run_llm(lambda text: output, "x", timeout=1.0) == ([], [], message)


def test_run_llm_bad_json_text() -> None:
    created, archived, error = run_llm(lambda text: "not json", "x", timeout=1.0)
    assert (created, archived) == ([], [])
    assert error is not None and error.startswith("llm extractor output unreadable: JSONDecodeError")


def test_run_llm_malformed_items_are_skipped_and_counted() -> None:
    items = [
        "a string",
        {"content": ""},
        {"content": "ok one"},
        {"content": "bad importance", "importance": 2},
        {"content": "bad action", "action": "delete"},
        {"content": "bad kind", "kind": "pattern"},
        {"content": "bad category", "category": "misc"},
        {"content": "slot without value", "slot": ["user", "editor"]},
        {"content": "value without slot", "value": "vim"},
        {"content": "bad tags", "tags": "x"},
        {"content": "archive me", "action": "archive"},
    ]
    created, archived, error = run_llm(lambda text: items, "x", timeout=1.0)
    assert [c.content for c in created] == ["ok one"]
    assert created[0] == Candidate("ok one", "fact", "personal", None, None, ("llm",), 0, ("personal",))
    assert archived == ["archive me"]
    assert error == "9 invalid llm item(s) skipped (first: not an object)"


H = [Candidate("I prefer tabs", "fact", "preference", ("user", "indentation"), "tabs", ("preference.prefer",), 0,
               ("preference",))]  # fmt: skip
L = [
    Candidate("i prefer TABS!", "fact", "preference", None, None, ("llm",), 0, ("preference",)),
    Candidate("User likes JRPGs", "fact", "preference", None, None, ("llm",), 1, ("preference",)),
    Candidate("user likes jrpgs", "fact", "preference", None, None, ("llm",), 1, ("preference",)),
]


def test_combine_modes() -> None:
    assert combine(H, L, "heuristic") == H
    assert combine(H, L, "llm") == L
    assert combine(H, [], "llm") == H  # an empty LLM answer falls back to the heuristic
    assert combine(H, L, "hybrid") == H + [L[1]]
    assert combine([], L, "hybrid") == [L[0], L[1]]
    with pytest.raises(ValueError, match="unknown extractor mode"):
        combine(H, L, "magic")


# --- hostile input


def assert_well_formed(text: str, out: list[Candidate]) -> None:
    collapsed = " ".join(text.split())
    for c in out:
        assert c.kind in KINDS
        assert c.category in CATEGORIES
        assert (c.slot is None) == (c.value is None)
        if c.slot is not None:
            assert all(isinstance(p, str) and p for p in c.slot) and c.value
        assert c.content and c.content in collapsed
        assert len(c.content) <= MAX_CONTENT
        assert c.rules == tuple(sorted(c.rules)) and c.rules
        assert c.importance in (0, 1)
        assert c.tags == tuple(sorted(c.tags)) and c.category in c.tags


WORDS = st.sampled_from(
    "I I'm my we our the project uses use prefer tabs spaces Postgres moved to from no longer now never always "
    "don't make sure remember that name is Alex live in Boston went yesterday last week decided because let's "
    "go with chose over written in Rust config lives config/app.toml . ! ? , \n \ud800 \x00 é 😀 ’ `".split(" ")
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, max_size=60).map(" ".join), st.sampled_from(["user", "assistant", "other"]),
       st.one_of(st.none(), st.text(max_size=10)))  # fmt: skip
def test_extract_never_raises_on_rule_words(text: str, role: str, speaker: str | None) -> None:
    assert_well_formed(text, extract(text, role=role, speaker=speaker))


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_extract_never_raises_on_any_text(text: str) -> None:
    assert_well_formed(text, extract(text))


@pytest.mark.parametrize(
    "text",
    [
        "I " * 500_000,
        "we use " * 200_000,
        "my name is " * 100_000,
        "the " * 250_000 + "database is postgres",
        "a. " * 400_000,
        "\ud800" * 1_000_000,
        "\x00" * 1_000_000,
        "I've been " + "painting " * 120_000 + "for 7 years",
        "x" * 1_000_000,
        "I prefer tabs!\n" * 70_000,
    ],
    ids=["I", "we-use", "name", "the", "dots", "surrogates", "nul", "been", "x", "lines"],
)
def test_huge_adversarial_inputs_return(text: str) -> None:
    assert_well_formed(text[:20_000], extract(text))
