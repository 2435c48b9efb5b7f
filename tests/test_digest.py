from __future__ import annotations

import hashlib
import subprocess
import sys

from aircher_mem import _core, digest
from hypothesis import given
from hypothesis import strategies as st


@given(st.binary(max_size=5000), st.binary(max_size=200))
def test_digest_is_hashlibs_sha256(data: bytes, more: bytes) -> None:
    assert digest.sha256_hex(data) == hashlib.sha256(data).hexdigest()
    h = digest.sha256(data)
    h.update(more)
    assert h.digest() == hashlib.sha256(data + more).digest()


@given(st.binary(max_size=70_000))
def test_the_native_digest_is_hashlibs_sha256(data: bytes) -> None:
    assert _core.sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_redaction_and_token_counting_do_not_load_openssl() -> None:
    code = (
        "import sys\n"
        "from aircher_mem.redact import redact\n"
        "from aircher_mem.tokens import TokenCounter\n"
        "assert redact('key sk-ant-api03-' + 'a' * 40) != 'key sk-ant-api03-' + 'a' * 40\n"
        "assert TokenCounter('cl100k_base').count('hello world') == 2\n"
        "print('_hashlib' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
