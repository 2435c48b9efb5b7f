"""The result types (``aircher_mem.results``) are frozen dataclasses, made so when
first used: importing the module makes none of them; an instance, a look at the
fields or a match statement makes that class one, once, in any thread."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys
import typing

import pytest
from aircher_mem import results


def every_result() -> list[type]:
    return [getattr(results, name) for name in results.__all__]


def test_every_result_is_a_frozen_dataclass_with_its_annotated_fields() -> None:
    for cls in every_result():
        assert dataclasses.is_dataclass(cls), cls
        hints = typing.get_type_hints(cls)
        declared = [name for name, hint in hints.items() if typing.get_origin(hint) is not typing.ClassVar]
        assert [f.name for f in dataclasses.fields(cls)] == declared, cls
        assert cls.__match_args__ == tuple(f.name for f in dataclasses.fields(cls) if f.init), cls
        assert cls.__dataclass_params__.frozen, cls  # type: ignore[attr-defined]


def test_a_result_behaves_as_a_frozen_dataclass() -> None:
    hit = results.ChannelScore("lexical", 2.0, 0.5, 1.25)
    assert hit == results.ChannelScore("lexical", 2.0, 0.5, 1.25) != results.ChannelScore("graph", 2.0, 0.5, 1.25)
    assert hash(hit) == hash(results.ChannelScore("lexical", 2.0, 0.5, 1.25))
    assert repr(hit) == "ChannelScore(channel='lexical', raw=2.0, normalized=0.5, weight=1.25)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        hit.raw = 1.0  # type: ignore[misc]
    assert dataclasses.replace(hit, raw=1.0).raw == 1.0
    match hit:
        case results.ChannelScore(channel, raw, _, _):
            assert (channel, raw) == ("lexical", 2.0)
    with pytest.raises(TypeError):
        results.ChannelScore("lexical")  # type: ignore[call-arg]
    with pytest.raises(AttributeError):
        results.ChannelScore.no_such_attribute  # type: ignore[attr-defined]


FRESH = r"""
import pickle, sys, threading
from aircher_mem import results
assert not results._MADE, results._MADE  # the import makes none
print(len(results.__all__))
if sys.argv[1] == "threads":
    made, barrier = [], threading.Barrier(16)
    def make():
        barrier.wait()
        made.append(results.Reason("recent", "fresh", 0.5))
    threads = [threading.Thread(target=make) for _ in range(16)]
    for t in threads: t.start()
    for t in threads: t.join()
    assert len(made) == 16 and len(set(made)) == 1, made
    assert results._MADE == {results.Reason}, results._MADE
elif sys.argv[1] == "unpickle":
    hit = pickle.loads(bytes.fromhex(sys.argv[2]))
    assert results._MADE == {results.ChannelScore}, results._MADE
    print(repr(hit), hit == results.ChannelScore("dense", 0.25, 0.5, 1.0))
"""


def test_importing_makes_none_and_threads_make_one_once() -> None:
    done = subprocess.run(
        [sys.executable, "-c", FRESH, "threads"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(len(results.__all__))]


def test_an_instance_unpickled_in_a_fresh_process_is_made_first() -> None:
    data = pickle.dumps(results.ChannelScore("dense", 0.25, 0.5, 1.0)).hex()
    done = subprocess.run(
        [sys.executable, "-c", FRESH, "unpickle", data], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == "ChannelScore(channel='dense', raw=0.25, normalized=0.5, weight=1.0) True"
