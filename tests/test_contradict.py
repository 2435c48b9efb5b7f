"""The offline contradiction detector: each rule on pairs that contradict and on
pairs that only look alike, the corrections it reads, and its invariants on any text
(symmetric, never raises, bounded, no text contradicts itself)."""

from __future__ import annotations

import dataclasses
import re
import time

import pytest
from aircher_mem.config import ContradictionsPolicy
from aircher_mem.longterm import contradict
from aircher_mem.longterm.contradict import DEFAULT, Verdict, correction, detect
from hypothesis import given, settings
from hypothesis import strategies as st

CONTRADICTIONS = [
    # (a) one setting, two values
    ("The project database is Postgres.", "We store everything in MySQL.", "attribute", "database: postgres vs mysql"),
    ("The user prefers tabs.", "The user prefers spaces.", "attribute", "indentation: tabs vs spaces"),
    ("The JS unit tests use jest.", "Frontend unit tests run on vitest.", "attribute", "test_runner: jest vs vitest"),
    ("The build tool is Bazel.", "The build tool is Buck.", "value", "build tool: bazel vs buck"),
    # named alternatives of one purpose, whatever their subjects are called
    (
        "The message queue is RabbitMQ.",
        "Events are published to Kafka.",
        "attribute",
        "message broker: rabbitmq vs kafka",
    ),
    (
        "Migrations are handled by Alembic.",
        "Schema migrations are run with Flyway.",
        "attribute",
        "schema migrations: alembic vs flyway",
    ),
    (
        "The app is licensed under MIT.",
        "The project is Apache-2.0 licensed.",
        "attribute",
        "license: mit vs apache-2.0",
    ),
    (
        "Production runs in us-east-1.",
        "The prod cluster lives in eu-west-1.",
        "attribute",
        "cloud region: us-east-1 vs eu-west-1",
    ),
    ("The default branch is main.", "The default branch is master.", "value", "default branch: main vs master"),
    ("Production is hosted on AWS.", "Everything prod runs in GCP.", "attribute", "cloud provider: aws vs gcp"),
    ("The team uses Jira for tickets.", "Issues are tracked in Linear.", "attribute", "issue tracker: jira vs linear"),
    ("I drive a Toyota.", "My car is a Honda.", "attribute", "car make: toyota vs honda"),
    # a value one side names and the other says is not used
    (
        "Jenkins runs our nightly jobs.",
        "We no longer use Jenkins for anything.",
        "attribute",
        "ci: jenkins vs not jenkins",
    ),
    (
        "We use Kubernetes for orchestration.",
        "No k8s here: services run on plain EC2 boxes.",
        "attribute",
        "orchestration: kubernetes vs not kubernetes",
    ),
    # amounts of one thing whose other words differ but share it, unqualified; "a week",
    # "one-week", "1,200"
    ("Backup retention is 30 days.", "We keep backups for 7 days.", "number", "backup: 30 days vs 7 days"),
    ("Backup retention is 30 days.", "We only keep backups for a week.", "number", "backup: 30 days vs a week"),
    ("Sprints are two weeks long.", "We run one-week sprints.", "number", "sprints: two weeks vs one-week"),
    ("My rent is $1,200 a month.", "I pay 1,800 a month in rent.", "number", "rent: 1,200 vs 1,800"),
    ("I have two kids.", "We have three children.", "number", "count:child: two kids vs three children"),
    # "from X to Y" leaves Y; "X was removed"
    (
        "Passwords are hashed with bcrypt.",
        "We switched password hashing from bcrypt to Argon2.",
        "attribute",
        "password hashing: bcrypt vs argon2",
    ),
    ("Linting: ESLint", "We lint JS with Biome now; ESLint was removed.", "attribute", "linter: eslint vs not eslint"),
    # opposite words of one pair on one subject, one side saying more; "turned on"
    (
        "Logging is synchronous.",
        "All log writes happen asynchronously on a background thread.",
        "opposite",
        "synchronous vs asynchronously",
    ),
    (
        "GraphQL introspection is disabled in prod.",
        "Introspection is turned on in production.",
        "opposite",
        "disabled vs on",
    ),
    # the speaker's own settings, and "has always been"
    ("I live in Berlin.", "These days I'm based in Lisbon.", "value", "home: berlin vs lisbon"),
    ("I grew up in Ohio.", "I was raised in Texas.", "value", "hometown: ohio vs texas"),
    (
        "My favourite colour is blue.",
        "Green has always been my favourite colour.",
        "value",
        "favourite colour: blue vs green",
    ),
    # (b) negation and opposites
    (
        "Use pytest for the tests.",
        "Never use pytest for the tests.",
        "attribute",
        "test_runner: pytest vs not pytest",
    ),
    (
        "Write the tests with the standard library's runner.",
        "Never write the tests with the standard library's runner.",
        "opposite",
        "write tests standard library's: negated by 'never'",
    ),
    (
        "Always run the linter before committing.",
        "Never run the linter before committing.",
        "opposite",
        "always vs never",
    ),
    ("Telemetry is enabled in the CLI.", "Telemetry is disabled in the CLI.", "opposite", "enabled vs disabled"),
    ("The HTTP client is synchronous.", "The HTTP client is async.", "opposite", "synchronous vs async"),
    ("DEBUG is true in production.", "DEBUG is false in production.", "opposite", "true vs false"),
    (
        "Allow force pushes to feature branches.",
        "Force pushes to feature branches are forbidden.",
        "opposite",
        "allow vs forbidden",
    ),
    ("Auto-formatting on save is on.", "Auto-formatting on save is off.", "opposite", "on vs off"),
    # (c) numbers, versions, dates
    (
        "The request timeout is 30 seconds.",
        "The request timeout is 60 seconds.",
        "number",
        "request timeout: 30 seconds vs 60 seconds",
    ),
    ("timeout is 30s", "timeout is 60s", "number", "timeout: 30s vs 60s"),
    (
        "The project targets Python 3.11.",
        "The project targets Python 3.12.",
        "number",
        "python: python 3.11 vs python 3.12",
    ),
    ("Deploy on Friday.", "Deploy on Monday.", "number", "deploy: friday vs monday"),
    (
        "The release is scheduled for March 3.",
        "The release is scheduled for March 10.",
        "number",
        "release scheduled: march 3 vs march 10",
    ),
    (
        "The nightly job runs at 02:00 UTC.",
        "The nightly job runs at 04:00 UTC.",
        "number",
        "nightly job utc: 02:00 vs 04:00",
    ),
    ("Database backups run daily.", "Database backups run weekly.", "number", "database backups: daily vs weekly"),
    (
        "The worker pool has 4 processes.",
        "The worker pool has 8 processes.",
        "number",
        "worker pool: 4 processes vs 8 processes",
    ),
    ("The package version is 1.4.2.", "The package version is 1.5.0.", "number", "package: 1.4.2 vs 1.5.0"),
    (
        "The code freeze starts on 2024-06-01.",
        "The code freeze starts on 2024-06-15.",
        "number",
        "freeze: 2024-06-01 vs 2024-06-15",
    ),
    ("The migration deadline is Q3.", "The migration deadline is Q4.", "number", "migration deadline: q3 vs q4"),
    (
        "The sprint lasts two weeks.",
        "The sprint lasts three weeks.",
        "number",
        "sprint: two weeks vs three weeks",
    ),
    # (d) a statement and its correction
    (
        "The database is Postgres.",
        "Actually, the database is MySQL, not Postgres.",
        "correction",
        "postgres corrected to mysql",
    ),
    ("CI runs on Jenkins.", "We no longer use Jenkins.", "correction", "no longer jenkins"),
    ("Install packages with npm.", "We switched from npm to pnpm.", "correction", "npm corrected to pnpm"),
    ("Lint the code with flake8.", "Use ruff instead of flake8.", "correction", "flake8 corrected to ruff"),
    ("The user develops on Windows.", "The user is not on Windows anymore.", "correction", "no longer windows"),
    (
        "Code is formatted with black.",
        "Not black anymore: we format with ruff format.",
        "correction",
        "black corrected to ruff format",
    ),
    # a change of state: got / lost, sought / owned, failed / passed
    ("Jon lost his job at the bank.", "Jon found a new job at a startup.", "state", "job: lost vs found"),
    ("Jon is looking for a dance studio.", "Jon owns a dance studio.", "state", "studio: looking for vs owns"),
    ("The nightly build is failing.", "The nightly build passes.", "state", "build: failing vs passes"),
    # one activity, two names for where it is done; a number written onto a word
    ("We review code on GitLab.", "Code review happens on GitHub.", "attribute", "code host: gitlab vs github"),
    ("We review code on Gerrit.", "Code review happens on Phabricator.", "name", "gerrit vs phabricator"),
    ("Compile with -O2.", "Compile with -O3.", "number", "compile: o2 vs o3"),
    ("Mia moved to Berlin.", "Mia lives in Lisbon.", "value", "mia: berlin vs lisbon"),
    # amounts read in more forms: word numbers of two words' length, "a thousand", ages
    # without a unit, a time of day in words, a timeout said as what happens, a port
    # after a colon, a bare number beside the thing it counts, a compound key's words
    (
        "The sync takes sixty minutes.",
        "The sync takes fourteen minutes.",
        "number",
        "sync: sixty minutes vs fourteen minutes",
    ),
    ("I'm 34.", "I turned 29 last month.", "number", "age: 34 vs 29"),
    ("My daughter is 7.", "My daughter just turned ten.", "number", "daughter: 7 vs ten"),
    ("CI timeout is 60 minutes.", "Jobs are killed after 20 min.", "number", "timeout: 60 minutes vs 20 min"),
    ("Request timeout: 30 seconds", "HTTP calls give up after 5s.", "number", "timeout: 30 seconds vs 5s"),
    ("The API server listens on port 8080.", "backend binds to :3000", "number", "port: 8080 vs 3000"),
    (
        "Retries: 3 attempts with exponential backoff.",
        "Failed calls are retried up to five times.",
        "number",
        "retries: 3 attempts vs five times",
    ),
    ("Line length limit is 80 characters.", "max-line-length = 120", "number", "line length: 80 characters vs 120"),
    ("My flight lands at 6pm.", "I arrive at 9 in the morning.", "number", "lands: 6pm vs 9 in the morning"),
    (
        "Rate limit: 100 requests per minute per user.",
        "Each user may send a thousand calls a minute.",
        "number",
        "user: 100 requests per minute vs 1000 calls a minute",
    ),
    ("DB connection pool size is 20.", "pool max = 50 connections", "number", "pool: 20 vs 50 connections"),
    (
        "Interpreter version for the worker: 3.8",
        "The worker's interpreter version is 3.11.",
        "number",
        "interpreter: 3.8 vs 3.11",
    ),
    # a negated statement that says nothing but what the other affirms
    (
        "We freeze the app with Nuitka.",
        "Nuitka is not allowed here; the app ships as plain wheels only.",
        "opposite",
        "nuitka: negated by 'not'",
    ),
    # a setting's value said not to be allowed
    (
        "We write our tests with pytest.",
        "pytest is not allowed here.",
        "attribute",
        "test_runner: pytest vs not pytest",
    ),
    # how often, in numbers: "every six hours", "once an hour", "twice a week"
    (
        "Database backups are taken every six hours.",
        "We back up the database once a day, at 02:00.",
        "number",
        "database: every six hours vs once a day",
    ),
    (
        "The cleanup cron runs every 15 minutes.",
        "The cleanup cron fires once an hour.",
        "number",
        "cleanup cron: every 15 minutes vs once an hour",
    ),
    # a word after a number that is not what it counts; approvals and reviews, columns
    # and characters; a percentage is not a version; uptime is availability
    ("The CI image uses Node 20.", "CI pins Node 18 because of the old webpack setup.", "number", "ci node: 20 vs 18"),
    (
        "Merging to main needs two approving reviews.",
        "One approval is enough to merge a PR into main.",
        "number",
        "merging main: two approving reviews vs one approval",
    ),
    (
        "Wrap lines at 80 columns.",
        "Lines may be up to 120 characters.",
        "number",
        "lines: 80 columns vs 120 characters",
    ),
    (
        "Our availability SLO is 99.9%.",
        "We target 99.5 percent uptime.",
        "number",
        "availability: 99.9% vs 99.5 percent",
    ),
    # what is counted after a word that says which ("API requests", "worker
    # processes"), and how many a second
    (
        "Each user may make 100 API requests per minute.",
        "The per-user rate limit is 10 requests per second.",
        "number",
        "user: 100 api requests per minute vs 10 requests per second",
    ),
    (
        "The Celery worker concurrency is 16.",
        "Celery runs with eight worker processes.",
        "number",
        "celery worker: 16 vs eight worker processes",
    ),
    # "20k" of a thing is twenty thousand of it
    (
        "The gateway holds 20k concurrent websocket connections.",
        "The gateway holds 5,000 concurrent websocket connections.",
        "number",
        "gateway holds websocket connections: 20k concurrent vs 5,000 concurrent",
    ),
    # an owner said as a noun; how many is not which
    (
        "Maria Lopez owns the billing service.",
        "Billing service owner: Tom Okafor.",
        "value",
        "billing service: maria lopez vs tom okafor",
    ),
    ("My only cat is called Pixel.", "Our one cat is named Mochi.", "value", "cat: pixel vs mochi"),
    # a service's log level, a person's shell
    ("Log level in production is INFO.", "Production logs at WARN.", "attribute", "log level: info vs warn"),
    ("My shell is fish.", "I use zsh as my shell.", "attribute", "shell: fish vs zsh"),
    # one word denied, in two texts of one sentence each
    (
        "Flaky tests get quarantined automatically.",
        "We never quarantine; a flaky test must be fixed before anything merges.",
        "opposite",
        "quarantined: negated by 'never'",
    ),
    # "instead of" negates
    ("We use Postgres instead of MySQL.", "The database is MySQL.", "correction", "mysql corrected to postgres"),
    # a value given up, or said not to be in use, beside the one that holds
    (
        "Error tracking goes through Sentry.",
        "We cancelled Sentry and moved error tracking to Rollbar.",
        "attribute",
        "error tracking: sentry vs rollbar",
    ),
    (
        "Backend tests are written with pytest.",
        "The backend test suite uses unittest only; pytest is not even installed.",
        "attribute",
        "test_runner: pytest vs unittest",
    ),
    # "over" says how, unless it follows a choice ("X over Y")
    (
        "Our services call each other over gRPC.",
        "Calls between services are plain REST.",
        "attribute",
        "api style: grpc vs rest",
    ),
    (
        "We picked Kafka over RabbitMQ.",
        "The message broker is RabbitMQ.",
        "attribute",
        "message broker: kafka vs rabbitmq",
    ),
    (
        "The library is licensed under MIT.",
        "We relicensed the library under the GPL.",
        "attribute",
        "license: mit vs gpl",
    ),
    # one subject in two states, each sentence saying more
    (
        "Telemetry is enabled for every build.",
        "Telemetry was turned off after the privacy review.",
        "opposite",
        "enabled vs off",
    ),
    # tests are not a scope of their own ("test coverage" is the coverage)
    (
        "CI fails when test coverage drops below 75%.",
        "The coverage gate in CI is eighty percent.",
        "number",
        "ci coverage: 75% vs eighty percent",
    ),
    # "client" names no scope ("the HTTP client"); "server" does
    (
        "The HTTP client retries a request at most 2 times.",
        "Requests are retried up to 4 times.",
        "number",
        "retries request: 2 times vs 4 times",
    ),
    # a negation before "into" still negates ("from X to Y" is another thing)
    (
        "Secrets are stored in AWS Secrets Manager.",
        "We keep all secrets in HashiCorp Vault; nothing goes into AWS Secrets Manager.",
        "attribute",
        "secrets store: aws secrets manager vs vault",
    ),
]

NOT_CONTRADICTIONS = [
    # a value given up in one clause, the one that holds in the next
    ("Sentry was removed; we use Rollbar now.", "Error reports go to Rollbar."),
    ("We migrated from Jenkins to GitHub Actions.", "CI runs on GitHub Actions."),
    # "not" about something else than its use
    ("We use pytest.", "pytest is not slow."),
    # one subject, opposite words that are not its state, or its states in two places
    ("Maya passed her piano exam.", "Maya failed her driving test."),
    ("Caching is enabled for images.", "Caching is disabled for HTML pages."),
    # unit and integration tests: two scopes
    ("Unit tests must cover 90% of lines.", "Integration tests cover 60% of lines."),
    ("The web client times out after 30 seconds.", "The server times out after 60 seconds."),
    # internal and public: two scopes
    ("Internal services talk over gRPC.", "The public API speaks REST."),
    # other people's values, other things' amounts
    ("I drive a Toyota.", "My partner drives a Volvo."),
    ("My birthday is in July.", "My wife's birthday is in September."),
    ("Dad retired in 2020.", "Mom retired in 2022."),
    ("The request timeout is 30 seconds.", "The connect timeout is 5 seconds."),
    ("The max upload size is 10 MB.", "The max avatar size is 1 MB."),
    # a value said not to hold that the other side does not name; two words of code
    ("We use Kubernetes for orchestration.", "We don't use Nomad."),
    ("The package manager is pnpm.", "The parent class keeps a child process."),
    ("Ravi failed his driving test.", "Ravi passed his math exam."),
    # one value in two spellings, one amount in two units, a past home
    ("I live in NYC.", "I'm based in New York City."),
    ("The build takes 30 minutes.", "The build takes half an hour."),
    ("I lived in Paris for three years.", "I live in Berlin."),
    # a license named only where the text says it is one
    ("The maintainer studied at MIT.", "The project is Apache-2.0 licensed."),
    ("The app is licensed under MIT.", "We moved off Apache Kafka last year, to keep MIT's license terms."),
    # a number that names which one
    ("Step 3: run the migrations.", "Step 4: run the migrations."),
    ("Issue #12 is about the login page.", "Issue #13 is about the login page."),
    ("The module m0 keeps its own cache.", "The module m1 keeps its own cache."),
    # added detail
    ("The database is Postgres.", "The database is Postgres 15, hosted on RDS."),
    ("Tests run with pytest.", "Tests run with pytest and pytest-xdist in parallel."),
    ("The request timeout is 30 seconds.", "The request timeout is 30 seconds; the connect timeout is 5 seconds."),
    ("Python 3.11 is required.", "Python 3.11 is required; Python 3.12 is tested in CI too."),
    ("The batch size is 32.", "The batch size is 32 for training and 128 for evaluation."),
    ("Caching is enabled for search.", "Caching is enabled for search but disabled for admin pages."),
    ("Dark mode is the default theme.", "Dark mode is the default theme; users can switch to light mode in settings."),
    # paraphrase, also across units
    ("The database is Postgres.", "We use PostgreSQL for storage."),
    ("The sprint lasts two weeks.", "Sprints are 14 days long."),
    ("The cache TTL is 10 minutes.", "Cached entries live for 600 seconds."),
    ("The token expires after 24 hours.", "Tokens are valid for one day."),
    ("The nightly job runs at 02:00 UTC.", "The nightly job starts at 2 AM UTC."),
    ("The timeout is 30 seconds.", "The timeout is 0.5 min."),
    ("Telemetry is off by default.", "By default, no telemetry is sent."),
    ("Do not mock the database in integration tests.", "Integration tests hit a real database, no mocks."),
    ("The user prefers spaces over tabs.", "The user wants spaces, not tabs."),
    # a correction agrees with its new value
    ("Actually, the database is MySQL, not Postgres.", "The database is MySQL."),
    ("We no longer use Jenkins; CI is on GitHub Actions.", "CI runs on GitHub Actions."),
    ("We switched from npm to pnpm.", "Use pnpm, not npm."),
    # different subjects, different units
    ("The request timeout is 30 seconds.", "The idle timeout is 60 seconds."),
    ("The access token expires after 24 hours.", "The refresh token expires after 30 days."),
    ("The project targets Python 3.11.", "The docs build uses Python 3.12."),
    ("The staging database is SQLite.", "The production database is Postgres."),
    ("The frontend tests use jest.", "The backend tests use pytest."),
    ("Use snake_case for functions.", "Use PascalCase for classes."),
    ("The staging cluster has 3 nodes.", "The production cluster has 12 nodes."),
    ("The timeout is 30 seconds.", "The timeout is 30 requests."),
    ("Retries are disabled for payments.", "Retries are enabled for the email sender."),
    ("Release builds use -O2.", "Debug builds use -O0."),
    ("Deploys happen on Friday.", "Monday is the planning meeting."),
    # one thing at two levels of detail
    ("The user is on Linux.", "Production servers run Ubuntu."),
    ("The user works in Neovim.", "The user uses vim."),
    # unrelated
    ("Tests run with pytest.", "The release is scheduled for March 3."),
    ("The user prefers tabs.", "Logs are shipped to Datadog."),
    # a change of state of another holder, another thing, or only thought of
    ("Jon lost his job.", "Gina found a new job."),
    ("Sam got a job as a nurse.", "Sam's sister lost her job."),
    ("Nina opened a bakery downtown.", "Nina is planning to open a second bakery."),
    ("Melanie works at Google.", "Melanie might quit Google next spring."),  # a hedged change
    ("The team added a new test for the parser.", "The team removed a flaky test from the lexer."),
    ("Jon has lost his job.", "Jon lost his job at the bank."),
    ("Jon lost his job.", "Jon lost his job and then found a new one."),
    # names of something new, names beside other words, numbers of other builds
    ("Maria got a puppy named Coco.", "Maria got a puppy named Shadow."),
    ("We use Slack for team chat.", "We use Zoom for team meetings."),
    ("Release builds compile with -O3.", "Debug builds compile with -O0."),
    ("Our docs are written in Markdown.", "Our docs are built with MkDocs."),
    # "prefer X over Y" says no to Y; "private" is not a negation of what the other says
    ("Avoid classes when a function will do.", "Prefer plain functions over classes unless state is needed."),
    ("The infra repo is private.", "Only members of the org can see the infra repository."),
    # amounts of other things, and the same amount written two ways
    ("The request timeout is 30 seconds.", "The connect timeout is 5 seconds."),
    ("I'm 34.", "My son is 7."),
    ("I'm 5 minutes away.", "I'm 30."),
    ("The API listens on port 8080.", "The admin UI serves on :9000 in the docs environment."),
    ("Standup is at 9 in the morning.", "Standup is at 9:00 am."),
    ("Retries: 3 attempts.", "Retries: three tries."),
    ("We have two hundred users.", "We have 200 users."),
    ("Logging is asynchronous.", "Log writes don't block; they're async."),
    # the same frequency two ways; the same amount of the same thing; a caption's count
    # is not what the rest of a chat turn is about
    ("I go to the gym three times a week.", "I work out at the gym thrice weekly."),
    ("The sync runs every other day.", "The sync runs every two days."),
    ("Product pages are cached for 10 minutes in the CDN.", "The CDN caches product pages for ten minutes."),
    (
        "[a photo of two children on a playground] Nice one, John!",
        "[a photo of two children on a playground] Sounds great.",
    ),
    (
        "We went to the beach with the kids. [image: a photo of three children playing on the beach] We always look "
        "forward to our family camping trip.",
        "My family has been great. [image: a photo of a man and two children sitting around a campfire] We always look "
        "forward to our family camping trip.",
    ),
    ("The job runs every zero days.", "The job runs 0 times a day."),
    # one rate in two units
    ("Rate limit: 600 requests per minute per API key.", "Each API key gets up to 10 requests per second."),
    ("We merge 3 pull requests a day.", "We merge 21 pull requests a week."),
    # twenty thousand written two ways
    ("We have 20k users.", "We have 20,000 users."),
    # owners of two services
    ("Billing service owner: Tom Okafor.", "Search service owner: Maria Lopez."),
    # a kind of log is not a log level; fish without a shell is not one
    ("The error log rotates daily.", "Debug logs are kept for a week."),
    ("I had fish for dinner.", "I use zsh as my shell."),
    # "one of" says which, not how many
    ("The pool has 20 connections.", "One of the pool connections is always idle."),
    # one common word negated in a chat turn of several sentences is not a denial
    (
        "Feeling supported means so much. It gives me the oomph to keep going.",
        "Thanks! I'm feeling confident and won't give up.",
    ),
    (
        "Thanks! I really appreciate your help. I will keep going and never quit.",
        "Thanks! I won't quit, no matter what. Your words motivate me.",
    ),
]


@pytest.mark.parametrize(("a", "b", "rule", "evidence"), CONTRADICTIONS)
def test_contradiction_found(a: str, b: str, rule: str, evidence: str) -> None:
    verdict = detect(a, b)
    assert verdict is not None
    assert (verdict.rule, verdict.evidence) == (rule, evidence)
    assert 0.0 < verdict.score <= 1.0
    assert detect(b, a) is not None


@pytest.mark.parametrize(("a", "b"), NOT_CONTRADICTIONS)
def test_not_a_contradiction(a: str, b: str) -> None:
    assert detect(a, b) is None
    assert detect(b, a) is None


def test_verdict_and_settings_are_frozen() -> None:
    verdict = detect("The retry limit is 3.", "The retry limit is 5.")
    assert verdict == Verdict("number", "retry limit: 3 vs 5", DEFAULT.score_number)
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.rule = "x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT.max_chars = 1  # type: ignore[misc]


def test_settings_change_the_decision() -> None:
    # the negated side says more than the other ("main"): the overlap decides
    a, b = "Rebase feature branches.", "Never rebase feature branches onto main."
    assert detect(a, b) == Verdict("opposite", "rebase feature branches: negated by 'never'", 0.562)
    strict = ContradictionsPolicy(opposite_overlap=0.9)
    assert detect(a, b, settings=strict) is None
    scored = ContradictionsPolicy(score_attribute=0.5)
    verdict = detect("The user prefers tabs.", "The user prefers spaces.", settings=scored)
    assert verdict is not None and verdict.score == 0.5


def test_only_the_first_characters_are_read() -> None:
    short = ContradictionsPolicy(max_chars=20)
    a, b = "Some long preamble here. The retry limit is 3.", "Some long preamble here. The retry limit is 5."
    assert detect(a, b) is not None
    assert detect(a, b, settings=short) is None


@pytest.mark.parametrize(
    ("text", "away"),
    [
        ("Actually, the database is MySQL, not Postgres.", "postgres"),
        ("We no longer use Jenkins.", "jenkins"),
        ("The user is not on Windows anymore.", "windows"),
        ("We switched from npm to pnpm.", "npm"),
        ("We moved from REST to gRPC for internal calls.", "rest"),
        ("Use ruff instead of flake8.", "flake8"),
        ("Instead of Celery, background jobs use RQ.", "celery"),
        ("Travis CI is no longer used.", "travis ci"),
        ("We stopped using Poetry.", "poetry"),
        ("Not black anymore: we format with ruff format.", "black"),
        ("The user no longer wants a summary.", "wants a summary"),
        ("The database is Postgres.", None),
        ("Do not use print.", None),
        ("Never commit to main.", None),
        ("", None),
    ],
)
def test_correction(text: str, away: str | None) -> None:
    assert correction(text) == away


def test_hostile_inputs_return_quickly() -> None:
    hostile = [
        "",
        "\ud800",
        "a\udfffb is 3",
        "x" * 1_000_000,
        "the timeout is 30s and " * 50_000,
        "9" * 5_000 + " seconds",
        "version " + "1." * 3_000 + "1",
        "the limit is NaN and inf, -inf, 1e309",
        "not " * 100_000,
        "actually " + "a, not b " * 20_000,
        "from " * 50_000 + "to",
        "99:99 on march 99, 2024-13-45, q9",
        "\x00\x01\x02",
        "🙂" * 10_000,
    ]
    start = time.perf_counter()
    for a in hostile:
        for b in [*hostile[:4], "the timeout is 60s"]:
            detect(a, b)
        correction(a)
    assert time.perf_counter() - start < 10.0


_AMOUNT_TEXT = st.one_of(
    st.text(max_size=120),
    st.lists(
        st.sampled_from(
            "the a an for in after every other once twice three times 3 30 2024-05-01 9:30 5pm 10 am march 4 "
            "4th of may q3 mondays daily python 3.11 v2 node20 -O2 1,200 99.9% 20k 10mb mb seconds hours "
            "half an hour first second floor , . : - _ ( ) [ ] may june".split()
        ),
        max_size=30,
    ).map(" ".join),
)


@settings(max_examples=500, deadline=None)
@given(_AMOUNT_TEXT)
def test_the_amount_pattern_finds_what_its_forms_find(text: str) -> None:
    """The word-start guard of the amounts' pattern only makes it faster."""
    forms = re.compile(contradict._AMOUNT_FORMS)
    found = [(m.span(), m.groupdict()) for m in contradict._AMOUNT.finditer(text)]
    assert found == [(m.span(), m.groupdict()) for m in forms.finditer(text)]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.text(max_size=200))
def test_symmetric_and_never_raises(a: str, b: str) -> None:
    assert (detect(a, b) is None) == (detect(b, a) is None)
    correction(a)


_WORDS = st.sampled_from(
    "the a database is postgres mysql not never always use uses tabs spaces timeout 30 60 seconds s "
    "minutes python 3.11 3.12 friday monday enabled disabled actually no longer instead of switched "
    "from to , ; . and but on off true false sync async port 8080 version 1.2.3 staging production "
    "Jon lost found his job passed failed build GitLab GitHub review code happens -O2 v3 looking for owns "
    "quit dropped gave up moved going gym two years ago kids children forty km name's called is my partner "
    "we I keep notes with in using favorite used left work at Google single married engaged divorced owns owned by Alice Bob".split()
)
_SENTENCES = st.lists(_WORDS, max_size=25).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(_SENTENCES, _SENTENCES)
def test_symmetric_on_statement_like_text(a: str, b: str) -> None:
    assert (detect(a, b) is None) == (detect(b, a) is None)


def _every_rule(a: str, b: str) -> Verdict | None:
    """detect without the features that spare most pairs the analysis."""
    x, y = contradict._analyse(a, DEFAULT), contradict._analyse(b, DEFAULT)
    if x.text == y.text or not x.text or not y.text:
        return None
    for rule in contradict._RULES:
        verdict = rule(x, y, DEFAULT) or rule(y, x, DEFAULT)
        if verdict is not None:
            return verdict
    return None


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(_SENTENCES, st.sampled_from([p[0] for p in CONTRADICTIONS + NOT_CONTRADICTIONS])),
    st.one_of(_SENTENCES, st.sampled_from([p[1] for p in CONTRADICTIONS + NOT_CONTRADICTIONS])),
)
def test_the_features_skip_only_pairs_no_rule_would_find(a: str, b: str) -> None:
    assert detect(a, b) == _every_rule(a, b)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_SENTENCES, st.text(max_size=300)))
def test_a_text_never_contradicts_itself(text: str) -> None:
    assert detect(text, text) is None
    if text.isascii():  # the same text in other case and spacing
        assert detect(text, " " + text.upper() + " ") is None


@settings(max_examples=50, deadline=None)
@given(st.text(min_size=1, max_size=60).map(lambda t: t * 400))
def test_long_text_is_bounded(text: str) -> None:
    start = time.perf_counter()
    detect(text, text[::-1])
    assert time.perf_counter() - start < 1.0


@settings(max_examples=400, deadline=None)
@given(
    st.text(
        alphabet=st.one_of(st.characters(), st.sampled_from(["\ud800", "\udfff", "’", "\u2028", "\x1c", "\x85", "İ"])),
        max_size=60,
    ),
    st.integers(min_value=-5, max_value=70),
)
def test_a_text_is_cleaned_to_lower_case_words_one_space_apart(text: str, limit: int) -> None:
    """The rules read a text lower-cased, cut at ``limit``, lone surrogates replaced and
    "’" as "'", its words one space apart."""
    head = text[: max(0, limit)].encode("utf-8", "replace").decode("utf-8")
    expected = re.sub(r"\s+", " ", head.lower().replace("’", "'")).strip()
    contradict._clean.cache_clear()
    assert contradict._clean(text, limit) == expected
