"""SHA-256 from CPython's own C module (``_sha256``, ``_sha2`` from 3.12), the
same digests :func:`hashlib.sha256` gives. Importing :mod:`hashlib` loads OpenSSL
(about 7 ms), which a hook or a short command would pay only to hash a few bytes;
a Python built without its own SHA-256 gets :mod:`hashlib`'s."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing is a cost on a hook's path
if TYPE_CHECKING:
    from typing import Any

__all__ = ["sha256", "sha256_hex"]


def _native() -> Any:
    for name in ("_sha256", "_sha2"):
        try:
            return __import__(name)
        except ImportError:
            continue
    return None


_C = _native()


def sha256(data: bytes = b"") -> Any:
    """A SHA-256 hash object over ``data`` (``update``, ``digest``, ``hexdigest``)."""
    if _C is None:  # pragma: no cover - a Python built without its own SHA-256
        import hashlib

        return hashlib.sha256(data)
    return _C.sha256(data)


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data``, hex."""
    return str(sha256(data).hexdigest())
