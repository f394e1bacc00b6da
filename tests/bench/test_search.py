"""The search benchmark at a small size: made-up sightings as described, the store keeping them, and both
libraries answering the range query as exact search does."""

import json
from pathlib import Path

import numpy as np

from bench.search import run, sightings
from bench.settings import SearchBenchConfig


def test_one_persons_sightings_are_alike_and_two_peoples_are_not() -> None:
    cfg = SearchBenchConfig(sightings=2000, people=20)
    faces, person, seen = sightings(cfg, np.random.default_rng(1))
    vectors = seen.astype(np.float32)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-2)
    same = np.einsum("ij,ij->i", vectors, faces[person])  # each sighting against its own person's face
    other = vectors @ faces[(person + 1) % cfg.people].T
    assert 0.7 < np.median(same) < 0.95 and abs(float(np.median(other))) < 0.1


def test_both_libraries_find_what_exact_search_finds(tmp_path: Path) -> None:
    out = tmp_path / "search.json"
    cfg = SearchBenchConfig(sightings=3000, people=60, queries=20, store_sightings=1000, engines=("sqlite",), out=out)
    run(cfg, "python -m bench search --sightings 3000 --people 60 --queries 20")
    result = json.loads(out.read_text())
    assert result["complete"] and set(result["libraries"]) == {"usearch", "faiss"}
    assert result["store"]["sqlite"]["sightings"] == 1000 and result["store"]["sqlite"]["per_s"] > 0
    assert result["matches_per_query"]["median"] > 10  # a person's other sightings pass the threshold
    for measured in result["libraries"].values():
        assert measured["recall"] > 0.95 and measured["add_per_s"] > 0 and measured["memory_mb"] > 0
