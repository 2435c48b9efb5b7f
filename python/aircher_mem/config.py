"""Policy: every weight, threshold and budget, with seed 002's values as defaults.

Built in code (``Policy()``, ``Policy(max_tokens=32_000)``) or loaded from TOML, by
default ``<project>/.aircher/config.toml``::

    [context]
    max_tokens = 180000          # the model's window, less a reply buffer
    encoding = "cl100k_base"
    prune_threshold = 0.8        # any field of ContextPolicy
    weight_code_snippet = 0.7
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._core import ContextPolicy
from .errors import InvalidInputError, PolicyError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

__all__ = ["Policy", "CONFIG_FILE"]

CONFIG_FILE = Path(".aircher") / "config.toml"


@dataclasses.dataclass(frozen=True)
class Policy:
    """Everything tunable. ``context`` holds the relevance formula's constants."""

    max_tokens: int = 180_000
    encoding: str = "cl100k_base"
    context: ContextPolicy = dataclasses.field(default_factory=ContextPolicy)

    def __post_init__(self) -> None:
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens <= 0:
            raise PolicyError(f"max_tokens must be a positive integer, got {self.max_tokens!r}")
        if not isinstance(self.encoding, str) or not self.encoding:
            raise PolicyError(f"encoding must be a non-empty string, got {self.encoding!r}")
        if not isinstance(self.context, ContextPolicy):
            raise PolicyError(f"context must be a ContextPolicy, got {type(self.context).__name__}")

    @classmethod
    def seed002(cls, **overrides: Any) -> Policy:
        """Seed 002's formula and constants, verbatim (the reference preset)."""
        return cls(context=ContextPolicy(), **overrides)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "policy") -> Policy:
        """Builds a policy from the TOML layout; unknown keys and wrong types are errors."""
        unknown = set(data) - {"context"}
        if unknown:
            raise PolicyError(f"{source}: unknown section(s) {sorted(unknown)}; known: ['context']")
        section = dict(data.get("context", {}))
        top: dict[str, Any] = {}
        for key in ("max_tokens", "encoding"):
            if key in section:
                top[key] = section.pop(key)
        for key, value in section.items():
            if key not in ContextPolicy.fields:
                known = ", ".join(["max_tokens", "encoding", *ContextPolicy.fields])
                raise PolicyError(f"{source}: unknown key context.{key}; known keys: {known}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise PolicyError(f"{source}: context.{key} must be a finite number, got {value!r}")
        try:
            return cls(context=ContextPolicy(**section), **top)
        except InvalidInputError as exc:
            raise PolicyError(f"{source}: {exc}") from None

    @classmethod
    def from_toml(cls, path: str | Path) -> Policy:
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise PolicyError(f"{path}: no such config file") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise PolicyError(f"{path}: not valid TOML: {exc}") from None
        return cls.from_dict(data, source=str(path))

    @classmethod
    def load(cls, root: str | Path) -> Policy:
        """The project's policy: ``<root>/.aircher/config.toml`` if present, else defaults."""
        path = Path(root) / CONFIG_FILE
        return cls.from_toml(path) if path.is_file() else cls()

    def to_dict(self) -> dict[str, Any]:
        """The TOML layout; ``Policy.from_dict(p.to_dict()) == p``."""
        return {"context": {"max_tokens": self.max_tokens, "encoding": self.encoding, **self.context.to_dict()}}

    def to_toml(self) -> str:
        lines = ["[context]"]
        for key, value in self.to_dict()["context"].items():
            lines.append(f"{key} = {json.dumps(value)}")
        return "\n".join(lines) + "\n"
