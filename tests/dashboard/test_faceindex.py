"""The sightings' index: a range query finds every face at least so alike, best first (exactly, on an
index this small), and forgets on demand."""

import numpy as np
import pytest

from facestream.dashboard.faceindex import FaceIndex


def unit(rng: np.random.Generator, count: int, ndim: int = 128) -> np.ndarray:
    vectors = rng.standard_normal((count, ndim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def wire(vector: np.ndarray) -> bytes:
    return vector.astype("<f2").tobytes()


def test_it_finds_every_sighting_alike_enough_best_first_and_no_other() -> None:
    rng = np.random.default_rng(0)
    strangers = unit(rng, 2000)
    someone = unit(rng, 1)[0]
    seen = [someone + noise * rng.standard_normal(128).astype(np.float32) for noise in (0.02, 0.05, 0.08)]
    seen = [v / np.linalg.norm(v) for v in seen]
    index = FaceIndex(128)
    index.add(list(range(2000)), [wire(v) for v in strangers])
    index.add([5000, 5001, 5002], [wire(v) for v in seen])
    found = index.within(wire(someone), min_similarity=0.5, limit=100)
    assert [key for key, _ in found] == [5000, 5001, 5002]
    exact = [float(someone @ v) for v in seen]
    assert np.allclose([similarity for _, similarity in found], exact, atol=5e-3)
    assert index.within(wire(someone), min_similarity=float(np.mean(exact[1:])), limit=100)[-1][0] == 5001
    assert len(index.within(someone, min_similarity=0.5, limit=2)) == 2


def test_forgotten_sightings_are_never_found_again() -> None:
    rng = np.random.default_rng(1)
    vectors = unit(rng, 50)
    index = FaceIndex(128)
    index.add(list(range(50)), [wire(v) for v in vectors])
    assert index.forget([3, 7, 999]) == 2 and len(index) == 48
    assert index.within(wire(vectors[3]), min_similarity=0.9, limit=10) == []
    assert [key for key, _ in index.within(wire(vectors[4]), min_similarity=0.9, limit=10)] == [4]


def test_an_embedding_of_another_size_is_refused() -> None:
    with pytest.raises(ValueError, match="embeddings of 64 values, the index holds 128"):
        FaceIndex(128).add([1], [wire(np.ones(64, np.float32) / 8)])
