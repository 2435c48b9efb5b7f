"""The NLI judge (aircher_mem.nli): a real onnxruntime session over small ONNX
classifiers built here (so every number is known), the tokenizer shipped for the
dense channel, and the judge as a store's."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from aircher_mem import InvalidInputError
from aircher_mem.config import DecisionsPolicy
from aircher_mem.longterm.contradict import detect
from aircher_mem.longterm.contradictions import goes_to_judge
from aircher_mem.root import shipped
from conftest import Store

onnx = pytest.importorskip("onnx", reason="building the test models needs onnx (the test extra)")
pytest.importorskip("onnxruntime", reason="the NLI judge runs on onnxruntime (the embeddings extra)")
tokenizers = pytest.importorskip("tokenizers", reason="the NLI judge reads tokenizer.json with tokenizers")

from aircher_mem.nli import MAX_CHARS, NliJudge  # noqa: E402

T0 = 1_700_000_000.0
TOKENIZER = Path(shipped("all-MiniLM-L6-v2-tokenizer.json"))
WORD = "alpha"  # the classifiers' one feature: the pair starts with this word
HIGH = math.exp(3) / (2 + math.exp(3))  # softmax of (0, 0, 3) at the contradiction label
LOW = math.exp(-3) / (2 + math.exp(-3))  # ... of (0, 0, -3)


def classifier(folder: Path, *, labels: int = 3, contradiction: int = 2, length: int | str = "seq") -> Path:
    """A model whose contradiction logit is 3 when the first token after [CLS] is
    WORD's and -3 otherwise, the other logits 0: P(contradiction) is HIGH or LOW."""
    from onnx import TensorProto, helper

    word = tokenizers.Tokenizer.from_file(str(TOKENIZER)).token_to_id(WORD)
    shape: list[int | str] = ["batch", length]
    first = helper.make_node("Gather", ["input_ids", "one"], ["first"], axis=1)
    same = helper.make_node("Equal", ["first", "word"], ["same"])
    as_float = helper.make_node("Cast", ["same"], ["hit"], to=TensorProto.FLOAT)
    scaled = helper.make_node("Mul", ["hit", "six"], ["scaled"])
    logit = helper.make_node("Sub", ["scaled", "three"], ["logit"])
    zero = helper.make_node("Mul", ["logit", "nought"], ["zero"])
    parts = ["logit" if i == contradiction else "zero" for i in range(labels)]
    concat = helper.make_node("Concat", parts, ["logits"], axis=1)
    graph = helper.make_graph(
        [first, same, as_float, scaled, logit, zero, concat],
        "nli",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, shape),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, shape),
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", labels])],
        [
            helper.make_tensor("one", TensorProto.INT64, [1], [1]),
            helper.make_tensor("word", TensorProto.INT64, [], [word]),
            helper.make_tensor("six", TensorProto.FLOAT, [], [6.0]),
            helper.make_tensor("three", TensorProto.FLOAT, [], [3.0]),
            helper.make_tensor("nought", TensorProto.FLOAT, [], [0.0]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "model.onnx"
    onnx.save(model, str(path))
    (folder / "tokenizer.json").write_bytes(TOKENIZER.read_bytes())
    return path


def labelled(folder: Path, id2label: dict[str, str]) -> None:
    (folder / "config.json").write_text(json.dumps({"id2label": id2label}), encoding="utf-8")


def test_a_contradiction_must_hold_both_ways(tmp_path: Path) -> None:
    classifier(tmp_path)
    judge = NliJudge.load(tmp_path, contradiction=2, threads=1)
    # (a, b) starts with alpha, (b, a) does not: the smaller of the two
    assert judge.probability("alpha is red", "beta is blue") == pytest.approx(LOW)
    assert judge.probability("beta is blue", "alpha is red") == pytest.approx(LOW)
    assert judge.probability("alpha is red", "alpha is blue") == pytest.approx(HIGH)
    assert judge.pair("alpha is red", "alpha is blue") and not judge.pair("alpha is red", "beta is blue")
    assert repr(judge) == "NliJudge(contradiction=2, threshold=0.9, max_tokens=512)"


def test_the_threshold_decides(tmp_path: Path) -> None:
    classifier(tmp_path)
    assert NliJudge.load(tmp_path, contradiction=2, threshold=HIGH).pair("alpha x", "alpha y")
    assert not NliJudge.load(tmp_path, contradiction=2, threshold=HIGH + 1e-6).pair("alpha x", "alpha y")
    for bad in (1.5, -0.1, float("nan"), "0.5", True):
        with pytest.raises(InvalidInputError, match="threshold"):
            NliJudge.load(tmp_path, contradiction=2, threshold=bad)  # type: ignore[arg-type]


def test_the_contradiction_label_comes_from_config_json(tmp_path: Path) -> None:
    classifier(tmp_path, labels=3, contradiction=0)
    with pytest.raises(InvalidInputError, match="contradiction=INDEX"):
        NliJudge.load(tmp_path)
    labelled(tmp_path, {"0": "CONTRADICTION", "1": "entailment", "2": "neutral"})
    judge = NliJudge.load(tmp_path)
    assert judge.contradiction == 0 and judge.probability("alpha a", "alpha b") == pytest.approx(HIGH)
    labelled(tmp_path, {"0": "entailment", "1": "neutral"})
    with pytest.raises(InvalidInputError, match="no single contradiction label"):
        NliJudge.load(tmp_path)
    with pytest.raises(InvalidInputError, match="below the model's 3 labels"):
        NliJudge.load(tmp_path, contradiction=3)


def test_a_model_of_fixed_length_gets_exactly_that_many_tokens(tmp_path: Path) -> None:
    classifier(tmp_path, length=16)
    judge = NliJudge.load(tmp_path / "model.onnx", contradiction=2)
    assert judge.max_tokens == 16
    # short pairs are padded to 16, long ones cut to 16: both run
    assert judge.probability("alpha", "alpha") == pytest.approx(HIGH)
    long = "alpha " + "word " * 5_000
    assert judge.probability(long, long) == pytest.approx(HIGH)
    with pytest.raises(InvalidInputError, match="max_tokens"):
        NliJudge.load(tmp_path, contradiction=2, max_tokens=17)


def test_files_that_are_not_one_model_and_one_tokenizer_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="no NLI model"):
        NliJudge.load(tmp_path / "nowhere")
    classifier(tmp_path / "a")
    (tmp_path / "a" / "tokenizer.json").unlink()
    with pytest.raises(InvalidInputError, match=r"exactly one tokenizer .*found none"):
        NliJudge.load(tmp_path / "a", contradiction=2)
    classifier(tmp_path / "b")
    (tmp_path / "b" / "sub").mkdir()
    (tmp_path / "b" / "sub" / "other.onnx").write_bytes((tmp_path / "b" / "model.onnx").read_bytes())
    with pytest.raises(InvalidInputError, match=r"exactly one ONNX model .*model.onnx, sub/other.onnx"):
        NliJudge.load(tmp_path / "b", contradiction=2)


def test_texts_are_checked_and_read_within_bounds(tmp_path: Path) -> None:
    classifier(tmp_path)
    judge = NliJudge.load(tmp_path, contradiction=2)
    with pytest.raises(InvalidInputError, match="a must be a string"):
        judge.probability(b"alpha", "alpha")  # type: ignore[arg-type]
    assert judge.probability("alpha \ud800 one", "alpha two\udfff") == pytest.approx(HIGH)
    assert judge.probability("", "") == pytest.approx(LOW)
    huge = "alpha " + "x" * (50 * MAX_CHARS)
    assert judge.probability(huge, huge) == pytest.approx(HIGH)


def test_the_store_asks_the_nli_judge_with_both_texts(tmp_path: Path, make_store: Store) -> None:
    classifier(tmp_path / "model")
    judge = NliJudge.load(tmp_path / "model", contradiction=2, threads=1)
    a, b = "alpha team meets on the third floor", "alpha team meets in the garden"
    assert detect(a, b) is None and goes_to_judge(a, b, 0.3)  # what the judge is for
    lt = make_store(judge=judge, decisions=DecisionsPolicy(judge_min_overlap=0.3))
    lt.remember(a, at=T0)
    lt.remember(b, at=T0 + 86_400)
    lt.remember("beta team meets in the garden", at=T0 + 2 * 86_400)  # (beta, alpha) is LOW
    [found] = lt.contradictions().contradictions
    assert (found.rule, found.memory_a, found.memory_b) == ("judge", 1, 2)
    lt.close()


def test_a_judge_is_callable_or_has_a_pair_method(make_store: Store) -> None:
    with pytest.raises(InvalidInputError, match="judge must be callable or have a pair method"):
        make_store(judge=object())


def _project(root: Path, decisions: str) -> Path:
    store = root / ".aircher"
    store.mkdir(mode=0o700, parents=True)
    (store / "config.toml").write_text(f"[decisions]\njudge_min_overlap = 0.3\n{decisions}", encoding="utf-8")
    return root


def test_a_project_names_its_nli_model_in_its_config(tmp_path: Path) -> None:
    from aircher_mem import Memory

    classifier(tmp_path / "model")
    root = _project(tmp_path / "p", f"nli_model = {str(tmp_path / 'model')!r}\nnli_contradiction = 2\n")
    with Memory.open(root) as memory:
        memory.remember("alpha team meets on the third floor")
        memory.remember("alpha team meets in the garden")
        [found] = memory.contradictions().contradictions
        assert found.rule == "judge" and repr(memory.longterm.judge).startswith("configured NliJudge(")


def test_a_configured_model_that_does_not_load_judges_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from aircher_mem import Memory

    classifier(tmp_path / "model", labels=3)  # no config.json and no nli_contradiction: which label is unknown
    root = _project(tmp_path / "p", f"nli_model = {str(tmp_path / 'model')!r}\n")
    with caplog.at_level("WARNING", logger="aircher_mem.nli"), Memory.open(root) as memory:
        memory.remember("alpha team meets on the third floor")
        memory.remember("alpha team meets in the garden")
        memory.remember("alpha team meets in the basement")
        assert memory.contradictions(status="all").contradictions == []
    [warning] = [r.getMessage() for r in caplog.records if r.name == "aircher_mem.nli"]
    assert "no NLI judge" in warning and "contradiction=INDEX" in warning


def test_the_policy_checks_the_nli_settings() -> None:
    from aircher_mem.config import PolicyError

    assert DecisionsPolicy().nli_model == "" and DecisionsPolicy(nli_model="pkg").nli_model == "pkg"
    for bad in ({"nli_model": 3}, {"nli_contradiction": -2}, {"nli_threshold": 1.5}):
        with pytest.raises(PolicyError):
            DecisionsPolicy(**bad)  # type: ignore[arg-type]


def test_a_pair_judge_has_an_overlap_of_its_own(tmp_path: Path, make_store: Store) -> None:
    classifier(tmp_path / "model")
    judge = NliJudge.load(tmp_path / "model", contradiction=2, threads=1)
    a, b = "alpha team meets on the third floor", "alpha team meets in the garden"
    lt = make_store(judge=judge, decisions=DecisionsPolicy(judge_min_overlap=0.0, nli_min_overlap=0.9))
    lt.remember(a, at=T0)
    lt.remember(b, at=T0 + 86_400)
    assert lt.contradictions(status="all").contradictions == []  # overlap 0.5: not asked
