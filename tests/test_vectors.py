"""The dense vector index as Python sees it (``aircher_mem._core.VectorIndex``): what
it takes (float32 or float64 numpy arrays of the right shape) and the typed error for
anything else."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from aircher_mem._core import VectorIndex
from aircher_mem.errors import InvalidInputError


def unit_rows() -> np.ndarray:
    return np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.6, 0.8, 0.0]], dtype=np.float32)


def test_float32_and_float64_give_the_same_index() -> None:
    single, double = VectorIndex(3), VectorIndex(3)
    single.upsert(["a", "b", "c"], unit_rows())
    double.upsert(["a", "b", "c"], unit_rows().astype(np.float64))
    query = np.array([0.0, 1.0, 0.0])
    expected = [("b", 1.0), ("c", pytest.approx(0.8)), ("a", 0.0)]
    assert single.search(query.astype(np.float32), 3) == expected
    assert double.search(query, 3) == expected
    assert single.search(query, 3) == double.search(query.astype(np.float32), 3)


def test_get_gives_the_normalized_rows_and_nan_for_a_key_without_one(tmp_path: Path) -> None:
    index = VectorIndex(3)
    index.upsert(["a", "c"], np.array([[2.0, 0.0, 0.0], [0.6, 0.8, 0.0]], dtype=np.float32))
    got = index.get(["c", "missing", "a"])
    assert got.dtype == np.float32 and got.shape == (3, 3)
    assert got[0].tolist() == pytest.approx([0.6, 0.8, 0.0])
    assert np.isnan(got[1]).all()
    assert got[2].tolist() == [1.0, 0.0, 0.0]
    assert index.get([]).shape == (0, 3)
    index.save(tmp_path / "v.bin")
    loaded = VectorIndex.load(tmp_path / "v.bin")  # read where it lies
    np.testing.assert_array_equal(loaded.get(["a", "c"]), index.get(["a", "c"]))


def test_a_non_contiguous_view_is_read_by_rows() -> None:
    index = VectorIndex(3)
    wide = np.zeros((2, 6), dtype=np.float32)
    wide[0, ::2] = [1.0, 0.0, 0.0]
    wide[1, ::2] = [0.0, 0.0, 1.0]
    index.upsert(["x", "z"], wide[:, ::2])
    assert index.search(np.array([0.0, 0.0, 2.0], dtype=np.float32), 1) == [("z", 1.0)]


@pytest.mark.parametrize(
    ("vectors", "message"),
    [
        (
            np.ones((3, 3), dtype=np.int64),
            "vectors must be a 2-D numpy array of float32 or float64, got a 2-D array of int64",
        ),
        (np.ones((3, 3), dtype=np.float16), "got a 2-D array of float16"),
        ([[1.0, 0.0, 0.0]] * 3, "got list"),
        (np.ones(3, dtype=np.float32), "got a 1-D array of float32"),
        (np.ones((2, 3), dtype=np.float32), "must have shape (3, 3), got [2, 3]"),
        (np.ones((3, 4)), "must have shape (3, 3), got [3, 4]"),
    ],
)
def test_anything_else_is_invalid_input(vectors: object, message: str) -> None:
    index = VectorIndex(3)
    with pytest.raises(InvalidInputError) as raised:
        index.upsert(["a", "b", "c"], vectors)  # type: ignore[arg-type]
    assert message in str(raised.value)
    assert len(index) == 0


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            np.ones((1, 3), dtype=np.float32),
            "the query must be a 1-D numpy array of float32 or float64, got a 2-D array of float32",
        ),
        (np.ones(3, dtype=np.int32), "got a 1-D array of int32"),
        ("abc", "got str"),
    ],
)
def test_a_query_that_is_not_a_float_vector_is_invalid_input(query: object, message: str) -> None:
    index = VectorIndex(3)
    index.upsert(["a", "b", "c"], unit_rows())
    with pytest.raises(InvalidInputError) as raised:
        index.search(query, 2)  # type: ignore[arg-type]
    assert message in str(raised.value)


def test_a_non_finite_float64_row_is_refused_and_rows_before_it_kept(tmp_path: Path) -> None:
    index = VectorIndex(3)
    rows = unit_rows().astype(np.float64)
    rows[1, 1] = np.nan
    with pytest.raises(InvalidInputError):
        index.upsert(["a", "b", "c"], rows)
    assert index.keys() == ["a"]
    # A float64 value beyond float32's range becomes infinite: refused too.
    with pytest.raises(InvalidInputError):
        index.upsert(["big"], np.array([[1e300, 0.0, 0.0]]))
    index.save(tmp_path / "v.bin")
    assert VectorIndex.load(tmp_path / "v.bin").keys() == ["a"]


def test_a_loaded_index_is_searched_in_its_file_and_damage_is_a_typed_error(tmp_path: Path) -> None:
    """A load maps the file and reads only the keys: a block damaged past them is a
    StoreCorruptError when a search (or the first change) reads it, and the index
    is left as it was; an index of the earlier format is a SchemaVersionError (the
    dense channel embeds again)."""
    from aircher_mem.errors import SchemaVersionError, StoreCorruptError

    rng = np.random.default_rng(7)
    rows = rng.normal(size=(3000, 32)).astype(np.float32)
    keys = [f"k{i}" for i in range(3000)]
    index = VectorIndex(32)
    index.upsert(keys, rows)
    path = tmp_path / "v.bin"
    index.save(path)
    query = rng.normal(size=32).astype(np.float32)
    loaded = VectorIndex.load(path)
    assert loaded.search(query, 5) == index.search(query, 5)
    assert loaded.remove(["k1", "nope"]) == 1 and len(loaded) == 2999

    data = bytearray(path.read_bytes())
    sums = (len(data) - 36 + 65536 + 8 - 1) // (65536 + 8) * 8  # the block sums after the payload
    data[len(data) - sums - 100] ^= 0x40  # the last row's values
    path.write_bytes(bytes(data))
    damaged = VectorIndex.load(path)
    with pytest.raises(StoreCorruptError, match="rebuild it"):
        damaged.search(query, 5)
    with pytest.raises(StoreCorruptError):
        damaged.upsert(["new"], rows[:1])
    assert len(damaged) == 3000 and "new" not in damaged.keys()

    data[8:12] = (1).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    with pytest.raises(SchemaVersionError):
        VectorIndex.load(path)
