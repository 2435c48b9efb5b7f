"""Known values of single-valued settings, for the extractor's rules.

``VOCAB`` maps each term said in a turn ("postgresql", "snake case") to the setting
it is a value of and the value's canonical form (``("database", "postgres")``);
``VOCAB_RE`` finds those terms as whole words; ``LANGUAGES`` maps a programming
language's names to one; ``ATTR_ALIASES`` maps a setting's short name ("db") to its
own ("database").
"""

from __future__ import annotations

import re

from ..pattern import lazy

__all__ = ["VOCAB", "VOCAB_RE", "LANGUAGES", "ATTR_ALIASES", "ALTERNATIVES", "ALTERNATIVE_CONTEXT", "known_value"]


VOCAB: dict[str, tuple[str, str]] = {}


def _add(attribute: str, terms: dict[str, str]) -> None:
    for term, canonical in terms.items():
        VOCAB[term] = (attribute, canonical)


_add(
    "database",
    {
        "postgres": "postgres",
        "postgresql": "postgres",
        "mysql": "mysql",
        "mariadb": "mariadb",
        "sqlite": "sqlite",
        "sqlite3": "sqlite",
        "mongodb": "mongodb",
        "mongo": "mongodb",
        "duckdb": "duckdb",
        "dynamodb": "dynamodb",
        "cockroachdb": "cockroachdb",
        "oracle": "oracle",
        "sql server": "sql server",
        "cassandra": "cassandra",
    },
)
_add("indentation", {"tabs": "tabs", "spaces": "spaces"})
_add(
    "test_runner",
    {
        "pytest": "pytest",
        "unittest": "unittest",
        "nose": "nose",
        "nose2": "nose2",
        "jest": "jest",
        "vitest": "vitest",
        "mocha": "mocha",
        "go test": "go test",
        "cargo test": "cargo test",
        "cargo nextest": "cargo nextest",
        "rspec": "rspec",
        "junit": "junit",
        "tox": "tox",
        "nox": "nox",
    },
)
_add(
    "package_manager",
    {
        "pip": "pip",
        "poetry": "poetry",
        "uv": "uv",
        "pipenv": "pipenv",
        "conda": "conda",
        "npm": "npm",
        "yarn": "yarn",
        "pnpm": "pnpm",
        "bun": "bun",
        "hatch": "hatch",
        "pdm": "pdm",
    },
)
_add(
    "formatter",
    {
        "black": "black",
        "ruff format": "ruff format",
        "prettier": "prettier",
        "gofmt": "gofmt",
        "rustfmt": "rustfmt",
        "yapf": "yapf",
        "autopep8": "autopep8",
        "clang-format": "clang-format",
        "biome": "biome",
    },
)
_add(
    "editor",
    {
        "vim": "vim",
        "neovim": "neovim",
        "nvim": "neovim",
        "emacs": "emacs",
        "vscode": "vscode",
        "vs code": "vscode",
        "visual studio code": "vscode",
        "sublime": "sublime text",
        "sublime text": "sublime text",
        "intellij": "intellij",
        "pycharm": "pycharm",
        "helix": "helix",
        "nano": "nano",
        "zed": "zed",
        "cursor": "cursor",
    },
)
_add(
    "web_framework",
    {
        "django": "django",
        "flask": "flask",
        "fastapi": "fastapi",
        "rails": "rails",
        "ruby on rails": "rails",
        "spring boot": "spring",
        "express": "express",
        "laravel": "laravel",
        "actix": "actix",
        "axum": "axum",
    },
)
_add(
    "frontend_framework",
    {
        "react": "react",
        "vue": "vue",
        "angular": "angular",
        "svelte": "svelte",
        "next.js": "next.js",
        "nextjs": "next.js",
        "nuxt": "nuxt",
    },
)
_add(
    "ci",
    {
        "github actions": "github actions",
        "gitlab ci": "gitlab ci",
        "circleci": "circleci",
        "jenkins": "jenkins",
        "travis ci": "travis ci",
        "buildkite": "buildkite",
        "azure pipelines": "azure pipelines",
        "teamcity": "teamcity",
    },
)
_add(
    "os",
    {
        "linux": "linux",
        "ubuntu": "ubuntu",
        "debian": "debian",
        "fedora": "fedora",
        "macos": "macos",
        "mac os": "macos",
        "osx": "macos",
        "a mac": "macos",
        "windows": "windows",
        "wsl": "wsl",
        "freebsd": "freebsd",
    },
)
_add(
    "linter",
    {
        "ruff": "ruff",
        "flake8": "flake8",
        "pylint": "pylint",
        "eslint": "eslint",
        "clippy": "clippy",
        "golangci-lint": "golangci-lint",
        "rubocop": "rubocop",
        "shellcheck": "shellcheck",
    },
)
_add("type_checker", {"mypy": "mypy", "pyright": "pyright", "pytype": "pytype"})
_add(
    "naming_convention",
    {
        "snake_case": "snake_case",
        "snake case": "snake_case",
        "camelcase": "camelcase",
        "camel case": "camelcase",
        "pascalcase": "pascalcase",
        "pascal case": "pascalcase",
        "kebab-case": "kebab-case",
        "kebab case": "kebab-case",
    },
)
_add("quote_style", {"single quotes": "single quotes", "double quotes": "double quotes"})
#: Named alternatives of which a project uses one for one purpose: term -> (kind,
#: canonical name). The contradiction rules read them with :data:`VOCAB`; the
#: extractor does not fill them as settings (a project that names two of them
#: over time keeps both memories).
ALTERNATIVES: dict[str, tuple[str, str]] = {}
for _kind, _terms in {
    "message broker": {
        "rabbitmq": "rabbitmq",
        "kafka": "kafka",
        "activemq": "activemq",
        "nats": "nats",
        "pulsar": "pulsar",
        "sqs": "sqs",
        "kinesis": "kinesis",
        "zeromq": "zeromq",
    },
    "mobile framework": {
        "flutter": "flutter",
        "react native": "react native",
        "xamarin": "xamarin",
        "ionic": "ionic",
        "cordova": "cordova",
        "nativescript": "nativescript",
    },
    "schema migrations": {
        "alembic": "alembic",
        "flyway": "flyway",
        "liquibase": "liquibase",
        "sqitch": "sqitch",
        "dbmate": "dbmate",
    },
    "license": {
        "mit": "mit",
        "apache-2.0": "apache-2.0",
        "apache 2.0": "apache-2.0",
        "apache license": "apache-2.0",
        "apache licensed": "apache-2.0",
        "gpl": "gpl",
        "gplv2": "gpl-2.0",
        "gpl-2.0": "gpl-2.0",
        "gplv3": "gpl-3.0",
        "gpl-3.0": "gpl-3.0",
        "lgpl": "lgpl",
        "agpl": "agpl",
        "bsd": "bsd",
        "mpl": "mpl",
        "mpl-2.0": "mpl",
        "isc": "isc",
        "unlicense": "unlicense",
        "proprietary": "proprietary",
    },
    "versioning": {
        "semantic versioning": "semver",
        "semver": "semver",
        "calendar versioning": "calver",
        "calver": "calver",
    },
    # the kinds below name a software project's choices (each of one kind at a time)
    "cloud provider": {
        "aws": "aws",
        "amazon web services": "aws",
        "gcp": "gcp",
        "google cloud": "gcp",
        "google cloud platform": "gcp",
        "azure": "azure",
        "microsoft azure": "azure",
        "digitalocean": "digitalocean",
        "hetzner": "hetzner",
        "linode": "linode",
        "ovh": "ovh",
        "heroku": "heroku",
        "fly.io": "fly.io",
        "vercel": "vercel",
        "netlify": "netlify",
        "oracle cloud": "oracle cloud",
    },
    "infrastructure as code": {
        "terraform": "terraform",
        "opentofu": "opentofu",
        "pulumi": "pulumi",
        "cloudformation": "cloudformation",
        "aws cdk": "cdk",
        "crossplane": "crossplane",
    },
    "issue tracker": {
        "jira": "jira",
        "linear": "linear",
        "github issues": "github issues",
        "gitlab issues": "gitlab issues",
        "youtrack": "youtrack",
        "asana": "asana",
        "trello": "trello",
        "clickup": "clickup",
        "bugzilla": "bugzilla",
        "redmine": "redmine",
    },
    "monitoring": {
        "prometheus": "prometheus",
        "datadog": "datadog",
        "new relic": "new relic",
        "honeycomb": "honeycomb",
        "dynatrace": "dynatrace",
        "cloudwatch": "cloudwatch",
        "zabbix": "zabbix",
        "nagios": "nagios",
    },
    "error tracking": {"sentry": "sentry", "rollbar": "rollbar", "bugsnag": "bugsnag", "honeybadger": "honeybadger"},
    "secrets store": {
        "hashicorp vault": "vault",
        "vault": "vault",
        "aws secrets manager": "aws secrets manager",
        "azure key vault": "azure key vault",
        "google secret manager": "google secret manager",
        "doppler": "doppler",
        "1password": "1password",
        "sops": "sops",
    },
    "api style": {
        "rest": "rest",
        "restful": "rest",
        "graphql": "graphql",
        "grpc": "grpc",
        "soap": "soap",
        "json-rpc": "json-rpc",
        "trpc": "trpc",
    },
    "orchestration": {
        "kubernetes": "kubernetes",
        "k8s": "kubernetes",
        "nomad": "nomad",
        "docker swarm": "docker swarm",
        "amazon ecs": "ecs",
        "ecs": "ecs",
    },
    "search engine": {
        "elasticsearch": "elasticsearch",
        "opensearch": "opensearch",
        "solr": "solr",
        "typesense": "typesense",
        "meilisearch": "meilisearch",
        "algolia": "algolia",
    },
    "password hashing": {
        "bcrypt": "bcrypt",
        "argon2": "argon2",
        "argon2id": "argon2",
        "scrypt": "scrypt",
        "pbkdf2": "pbkdf2",
    },
    "cache": {"redis": "redis", "memcached": "memcached", "valkey": "valkey", "varnish": "varnish"},
    "serialization": {
        "json": "json",
        "protobuf": "protobuf",
        "protocol buffers": "protobuf",
        "xml": "xml",
        "msgpack": "msgpack",
        "messagepack": "msgpack",
        "avro": "avro",
        "cbor": "cbor",
        "thrift": "thrift",
    },
    "bundler": {
        "webpack": "webpack",
        "vite": "vite",
        "rollup": "rollup",
        "esbuild": "esbuild",
        "parcel": "parcel",
        "turbopack": "turbopack",
        "rspack": "rspack",
    },
    "javascript runtime": {"node.js": "node.js", "nodejs": "node.js", "deno": "deno", "bun": "bun"},
    "orm": {
        "sqlalchemy": "sqlalchemy",
        "django orm": "django orm",
        "prisma": "prisma",
        "hibernate": "hibernate",
        "activerecord": "activerecord",
        "typeorm": "typeorm",
        "sequelize": "sequelize",
        "gorm": "gorm",
        "diesel": "diesel",
        "peewee": "peewee",
        "drizzle": "drizzle",
    },
    "code host": {"github": "github", "gitlab": "gitlab", "bitbucket": "bitbucket", "gitea": "gitea"},
    "chat": {
        "slack": "slack",
        "discord": "discord",
        "mattermost": "mattermost",
        "microsoft teams": "teams",
        "zulip": "zulip",
    },
    "payments": {"stripe": "stripe", "paypal": "paypal", "braintree": "braintree", "adyen": "adyen"},
    "identity provider": {
        "auth0": "auth0",
        "okta": "okta",
        "keycloak": "keycloak",
        "cognito": "cognito",
        "firebase auth": "firebase auth",
        "clerk": "clerk",
    },
    "feature flags": {"launchdarkly": "launchdarkly", "unleash": "unleash", "flagsmith": "flagsmith"},
    "car make": {
        make: make
        for make in (
            "toyota honda ford bmw tesla volkswagen audi subaru mazda hyundai kia nissan volvo mercedes "
            "chevrolet chevy peugeot renault fiat skoda porsche jeep lexus"
        ).split()
    },
    # the level a service logs at, a person's shell
    "log level": {
        "trace": "trace",
        "debug": "debug",
        "info": "info",
        "warn": "warn",
        "warning": "warn",
        "error": "error",
        "fatal": "fatal",
    },
    "shell": {"bash": "bash", "zsh": "zsh", "fish": "fish", "powershell": "powershell", "nushell": "nushell"},
    "cloud region": {
        region: region
        for region in (
            "us-east-1 us-east-2 us-west-1 us-west-2 ca-central-1 sa-east-1 eu-west-1 eu-west-2 eu-west-3 "
            "eu-central-1 eu-central-2 eu-north-1 eu-south-1 ap-south-1 ap-northeast-1 ap-northeast-2 "
            "ap-northeast-3 ap-southeast-1 ap-southeast-2 me-south-1 af-south-1 us-central1 us-east1 "
            "us-west1 europe-west1 europe-west2 europe-west3 europe-west4 asia-east1 asia-northeast1"
        ).split()
    },
}.items():
    for _term, _name in _terms.items():
        ALTERNATIVES[_term] = (_kind, _name)
#: Kinds of alternative a text names only when it also says the kind (a word that
#: starts so): "MIT" is a license in "licensed under MIT", not in "she studied at MIT".
ALTERNATIVE_CONTEXT: dict[str, tuple[str, ...]] = {
    "license": ("licens", "licenc", "relicens", "relicenc"),
    "issue tracker": ("ticket", "issue", "track", "bug", "board", "backlog"),
    "secrets store": ("secret", "credential", "password", "token", "key"),
    "api style": ("api", "endpoint", "servic", "interface", "rpc", "call"),
    "cache": ("cach",),
    "serialization": ("encod", "serial", "respons", "payload", "format", "return", "wire", "message", "bod"),
    "javascript runtime": ("runtime", "javascript", "js", "typescript", "server", "run"),
    "code host": ("repo", "review", "pull", "host", "source", "remote", "code", "merge"),
    "chat": ("chat", "talk", "message", "channel", "communicat"),
    "car make": ("car", "driv", "vehicle", "suv"),
    "log level": ("log",),
    "shell": ("shell",),
}
LANGUAGES = {
    "python": "python",
    "rust": "rust",
    "go": "go",
    "golang": "go",
    "typescript": "typescript",
    "javascript": "javascript",
    "java": "java",
    "kotlin": "kotlin",
    "c++": "c++",
    "c#": "c#",
    "c": "c",
    "ruby": "ruby",
    "php": "php",
    "swift": "swift",
    "scala": "scala",
    "elixir": "elixir",
    "haskell": "haskell",
    "zig": "zig",
    "ocaml": "ocaml",
    "clojure": "clojure",
    "dart": "dart",
    "lua": "lua",
    "perl": "perl",
}
VOCAB_RE = lazy(
    r"(?<![\w-])(" + "|".join(re.escape(t) for t in sorted(VOCAB, key=len, reverse=True)) + r")(?![\w-])",
    re.I,
)
ATTR_ALIASES = {"db": "database", "indent": "indentation", "ide": "editor", "lang": "language"}


def known_value(phrase: str, attribute: str | None = None) -> tuple[str, str] | None:
    """The first known setting value in ``phrase`` as (attribute, canonical value);
    with ``attribute``, only a value of that attribute."""
    for m in VOCAB_RE.finditer(phrase):
        hit = VOCAB[m.group(1).lower()]
        if attribute is None or hit[0] == attribute:
            return hit
    return None
