"""The search benchmark at a small size: made-up sightings as described, the store keeping them, and both
libraries answering the range query as exact search does."""

import json
from pathlib import Path

import numpy as np
import pytest

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


@pytest.mark.slow  # embeds the sample photos' views on the CPU
def test_both_libraries_find_what_exact_search_finds(tmp_path: Path) -> None:
    out = tmp_path / "search.json"
    cfg = SearchBenchConfig(
        sightings=3000, people=60, queries=20, checkpoints=(1000,), store_sightings=1000, engines=("sqlite",), out=out
    )
    run(cfg, "python -m bench search --sightings 3000 --people 60 --queries 20 --checkpoints 1000")
    result = json.loads(out.read_text())
    assert result["complete"] and set(result["libraries"]) == {"usearch", "faiss"}
    assert result["store"]["sqlite"]["sightings"] == 1000 and result["store"]["sqlite"]["per_s"] > 0
    assert result["matches_per_query"]["median"] > 10  # a person's other sightings pass the threshold
    real = result["real_faces"]
    assert real["people"] == 6 and real["faces"] >= 70  # the sample photos' faces, most views of each found
    # Views of one photo are nearly always found, and no one is taken for another person at 0.5.
    assert real["exact"]["recall_one_photo"] > 0.9 and real["exact"]["false_matches"] == 0
    for measured in result["libraries"].values():
        assert measured["recall"] > 0.95 and measured["add_per_s"] > 0 and measured["memory_mb"] > 0
        assert [size["sightings"] for size in measured["growth"]] == [1000]
        assert measured["real_faces"] == real["exact"]  # the real faces among 3,000: the index finds what exact does
