"""Known values of single-valued settings, for the extractor's rules.

``VOCAB`` maps each term said in a turn ("postgresql", "snake case") to the setting
it is a value of and the value's canonical form (``("database", "postgres")``);
``VOCAB_RE`` finds those terms as whole words; ``LANGUAGES`` maps a programming
language's names to one; ``ATTR_ALIASES`` maps a setting's short name ("db") to its
own ("database").
"""

from __future__ import annotations

import re

__all__ = ["VOCAB", "VOCAB_RE", "LANGUAGES", "ATTR_ALIASES", "known_value"]


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
VOCAB_RE = re.compile(
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
