"""A contradiction judge from a natural-language-inference model, offline.

The rules of :mod:`aircher_mem.longterm.contradict` find a changed setting, a
negation, numbers that differ or an explicit correction; they miss a contradiction
that needs a little knowledge of the world ("I follow a strictly vegan diet" / "Had
a cheeseburger for lunch"). An NLI cross-encoder reads both texts together and
gives the probability that one contradicts the other. ``NliJudge`` runs such a
model on onnxruntime and is given to the store as its judge
(``Memory.open(judge=NliJudge.load(path))``): a pair the rules pass over is then
asked of it (see :func:`aircher_mem.longterm.contradictions.ask_judge`).

aircher-mem ships no NLI model: bring one that is yours to use. What ``load``
reads, from a folder or from an installed package (its import name):

* one ``.onnx`` file, a sequence-classification model whose first output is the
  label logits of each pair (batch, labels); its inputs are among ``input_ids``,
  ``attention_mask`` and ``token_type_ids`` (a Hugging Face model exported with
  Optimum has this form);
* the model's ``tokenizer.json`` (Hugging Face ``tokenizers``), which encodes the
  two texts as one sequence pair;
* which output means "contradiction": ``contradiction=INDEX``, or the
  ``id2label`` of a ``config.json`` beside the model (the label whose name holds
  "contradict").

The runtime is the one of the dense channel: ``pip install 'aircher-mem[embeddings]'``.

A contradiction holds both ways, so both orders are run (one batch of two) and the
smaller probability is the pair's: a hypothesis that is merely more specific than
its premise is "neutral" one way. The pair contradicts when that probability
reaches ``threshold``. Each text is read up to :data:`MAX_CHARS` characters, and the
pair is cut to the model's input length (longest text first).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import math
import os
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import checks
from .errors import AircherError, EncodingUnavailableError, InvalidInputError

if TYPE_CHECKING:
    from .config import DecisionsPolicy

__all__ = ["NliJudge", "configured", "DEFAULT_THRESHOLD", "MAX_CHARS"]

log = logging.getLogger("aircher_mem.nli")

#: The probability of contradiction (the smaller of the two orders) at which a pair
#: contradicts, unless ``threshold`` says otherwise.
DEFAULT_THRESHOLD = 0.9
#: Characters of each text read at most (a memory is a statement, not a document).
MAX_CHARS = 4_000
#: The pair's tokens at most when neither the model nor its tokenizer says.
_DEFAULT_TOKENS = 512
_EXTRA = "aircher-mem[embeddings]"
_SURROGATES = re.compile("[\ud800-\udfff]")
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_DEPTH = 2  # folders below the model's where its files are looked for


def _files(root: Path, pattern: str) -> list[Path]:
    found: list[Path] = []
    for depth in range(_DEPTH + 1):
        found += sorted(p for p in root.glob("/".join(["*"] * depth + [pattern])) if p.is_file())
    return found


def _one(root: Path, pattern: str, what: str) -> Path:
    found = _files(root, pattern)
    if len(found) != 1:
        named = ", ".join(str(p.relative_to(root)) for p in found[:5]) or "none"
        raise InvalidInputError(f"{root} must hold exactly one {what} ({pattern}); found {named}")
    return found[0]


def _folder(model: str | os.PathLike[str]) -> Path:
    """The folder of ``model``: a folder, the folder of a ``.onnx`` file, or an
    installed package's (found without importing it)."""
    path = Path(model).expanduser()
    if path.is_dir():
        return path
    if path.is_file():
        return path.parent
    name = os.fspath(model)
    spec = None
    if all(part.isidentifier() for part in name.split(".")):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    raise InvalidInputError(f"no NLI model at {name!r}: neither a folder, a file nor an installed package")


def _label(folder: Path, model: Path, labels: int) -> int:
    """The index of "contradiction" from a ``config.json`` beside the model."""
    for config in (model.parent / "config.json", folder / "config.json"):
        if not config.is_file():
            continue
        try:
            id2label = json.loads(config.read_text(encoding="utf-8")).get("id2label") or {}
        except (OSError, ValueError, AttributeError) as exc:
            raise InvalidInputError(f"cannot read {config}: {exc}") from None
        found = [int(i) for i, name in id2label.items() if "contradict" in str(name).lower()]
        if len(found) == 1 and 0 <= found[0] < labels:
            return found[0]
        raise InvalidInputError(f"{config}'s id2label names no single contradiction label: {id2label}")
    raise InvalidInputError(
        f"{model} has {labels} outputs and no config.json names them: say which is contradiction (contradiction=INDEX)"
    )


def _fixed_length(session: Any) -> int | None:
    """The sequence length the model's ``input_ids`` is fixed at, if it is."""
    for item in session.get_inputs():
        shape = list(getattr(item, "shape", []) or [])
        if item.name == "input_ids" and len(shape) == 2 and isinstance(shape[1], int) and shape[1] > 2:
            return int(shape[1])
    return None


def _max_tokens(session: Any, folder: Path, tokenizer_file: Path) -> int:
    """The model's fixed sequence length, else the tokenizer's ``model_max_length``,
    else :data:`_DEFAULT_TOKENS`."""
    fixed = _fixed_length(session)
    if fixed is not None:
        return fixed
    for config in (tokenizer_file.parent / "tokenizer_config.json", folder / "tokenizer_config.json"):
        try:
            length = json.loads(config.read_text(encoding="utf-8")).get("model_max_length")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(length, int) and 2 < length <= 100_000:
            return length
    return _DEFAULT_TOKENS


def _threshold(value: object) -> float:
    threshold = checks.number("threshold", value)
    if threshold > 1.0:
        raise InvalidInputError(f"threshold must be a probability from 0 to 1, got {checks.short(value)}")
    return threshold


def _text(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be a string, got {checks.short(value)}")
    return _SURROGATES.sub("", value[:MAX_CHARS])


class NliJudge:
    """Whether two memories contradict, by an NLI model: ``NliJudge.load(path)``,
    then ``pair(a, b)`` (what the store's judge is asked) or ``probability(a, b)``.
    Thread-safe; load once and reuse (a load takes a second or two)."""

    def __init__(self, session: Any, tokenizer: Any, *, contradiction: int, threshold: float, max_tokens: int) -> None:
        """Use :meth:`load`; this wires an onnxruntime session and a ``tokenizers``
        tokenizer already made."""
        self._session = session
        self._tokenizer = tokenizer
        self._inputs = tuple(i.name for i in session.get_inputs())
        unknown = [name for name in self._inputs if name not in _INPUTS]
        if unknown or "input_ids" not in self._inputs:
            raise InvalidInputError(f"the NLI model's inputs {list(self._inputs)} are not {list(_INPUTS)}")
        #: Index of the "contradiction" output.
        self.contradiction = checks.integer("contradiction", contradiction, 0)
        #: The probability at which :meth:`pair` says yes.
        self.threshold = _threshold(threshold)
        fixed = _fixed_length(session)
        #: Tokens of a pair at most (the longer text is cut first).
        self.max_tokens = checks.integer("max_tokens", max_tokens, 3, fixed or checks.MAX_INT)
        tokenizer.enable_truncation(self.max_tokens, strategy="longest_first")
        pad = tokenizer.token_to_id("[PAD]")
        if pad is None:
            pad = tokenizer.token_to_id("<pad>")
        # a model fixed at one length takes exactly that many tokens, padding masked
        tokenizer.enable_padding(pad_id=0 if pad is None else pad, length=fixed)

    @classmethod
    def load(
        cls,
        model: str | os.PathLike[str],
        *,
        contradiction: int | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        max_tokens: int | None = None,
        threads: int | None = None,
    ) -> NliJudge:
        """The model in ``model`` (a folder, its ``.onnx`` file, or the import name of
        an installed package holding them), never from the network.

        ``contradiction``: the index of the "contradiction" output (default: from
        ``config.json``); ``threshold``: see :data:`DEFAULT_THRESHOLD`; ``max_tokens``:
        the pair's length (default: the model's fixed input length, else the
        tokenizer's ``model_max_length``, else 512); ``threads``: onnxruntime's
        intra-op threads (default: min(4, usable cores)).

        Raises :class:`~aircher_mem.errors.InvalidInputError` when the files are
        not there, not one of each, or do not say which output is contradiction;
        :class:`~aircher_mem.errors.EncodingUnavailableError` when the runtime is
        not installed or cannot load them."""
        from .embeddings import _default_threads

        n_threads = _default_threads() if threads is None else checks.integer("threads", threads, 1)
        threshold = _threshold(threshold)
        folder = _folder(model)
        given = Path(model).expanduser()
        onnx = given if given.is_file() else _one(folder, "*.onnx", "ONNX model")
        tokenizer_file = _one(folder, "tokenizer.json", "tokenizer")
        try:  # imported by name: both are optional, and onnxruntime has no type information
            ort: Any = importlib.import_module("onnxruntime")
            tokenizers: Any = importlib.import_module("tokenizers")
        except ImportError as exc:
            raise EncodingUnavailableError(
                f"the NLI judge needs onnxruntime and tokenizers ({exc}); install them with: pip install '{_EXTRA}'"
            ) from None
        try:
            tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_file))
        except Exception as exc:  # tokenizers raises a bare Exception on a bad file
            raise EncodingUnavailableError(f"cannot load the tokenizer {tokenizer_file}: {exc}") from None
        ort.disable_telemetry_events()
        options = ort.SessionOptions()
        options.intra_op_num_threads = n_threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            session = ort.InferenceSession(str(onnx), sess_options=options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime's own exception classes
            raise EncodingUnavailableError(f"onnxruntime cannot load {onnx}: {exc}") from None
        outputs = session.get_outputs()
        shape = list(getattr(outputs[0], "shape", []) or []) if outputs else []
        labels = shape[-1] if len(shape) == 2 and isinstance(shape[-1], int) else None
        if labels is None or labels < 2:
            raise InvalidInputError(f"{onnx}'s first output {shape} is not (batch, labels) logits")
        if contradiction is None:
            contradiction = _label(folder, onnx, labels)
        elif not 0 <= checks.integer("contradiction", contradiction, 0) < labels:
            raise InvalidInputError(f"contradiction must be below the model's {labels} labels, got {contradiction}")
        length = _max_tokens(session, folder, tokenizer_file) if max_tokens is None else max_tokens
        return cls(session, tokenizer, contradiction=contradiction, threshold=threshold, max_tokens=length)

    def __repr__(self) -> str:
        return f"NliJudge(contradiction={self.contradiction}, threshold={self.threshold}, max_tokens={self.max_tokens})"

    def probability(self, a: str, b: str) -> float:
        """The probability that ``a`` and ``b`` contradict: the model's for (a, b) and
        for (b, a), the smaller of the two."""
        import numpy as np

        first, second = _text(a, "a"), _text(b, "b")
        encoded = self._tokenizer.encode_batch([(first, second), (second, first)])
        columns = {
            "input_ids": [e.ids for e in encoded],
            "attention_mask": [e.attention_mask for e in encoded],
            "token_type_ids": [e.type_ids for e in encoded],
        }
        feed = {name: np.asarray(columns[name], dtype=np.int64) for name in self._inputs}
        logits = np.asarray(self._session.run(None, feed)[0], dtype=np.float64)
        if logits.ndim != 2 or logits.shape[0] != 2 or logits.shape[1] <= self.contradiction:
            raise EncodingUnavailableError(f"the NLI model gave logits of shape {logits.shape}, not (2, labels)")
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        chance = shifted[:, self.contradiction] / shifted.sum(axis=1)
        value = float(chance.min())
        return value if math.isfinite(value) else 0.0

    def pair(self, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` contradict: :meth:`probability` reaches :attr:`threshold`."""
        return self.probability(a, b) >= self.threshold


class _Configured:
    """The judge ``[decisions]`` names, loaded when its first pair is asked. A model
    that does not load is logged once, and every pair then fails with that error (a
    failed answer is no answer: :func:`~aircher_mem.longterm.contradictions.ask_judge`)."""

    def __init__(self, policy: DecisionsPolicy) -> None:
        self._policy = policy
        self._lock = threading.Lock()
        self._judge: NliJudge | None = None
        self._error: AircherError | None = None

    def __repr__(self) -> str:
        return f"configured NliJudge({self._policy.nli_model!r})"

    def _loaded(self) -> NliJudge:
        with self._lock:
            if self._judge is None and self._error is None:
                policy = self._policy
                try:
                    self._judge = NliJudge.load(
                        policy.nli_model,
                        contradiction=None if policy.nli_contradiction < 0 else policy.nli_contradiction,
                        threshold=policy.nli_threshold,
                    )
                except AircherError as exc:
                    log.warning("[decisions] nli_model %r: no NLI judge: %s", policy.nli_model, exc)
                    self._error = exc
            if self._error is not None:
                raise self._error
            assert self._judge is not None
            return self._judge

    def pair(self, a: str, b: str) -> bool:
        return self._loaded().pair(a, b)


def configured(policy: DecisionsPolicy) -> _Configured | None:
    """The NLI judge ``policy.nli_model`` names, loaded at its first pair; None when
    it names none."""
    return _Configured(policy) if policy.nli_model else None
