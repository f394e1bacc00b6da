"""Search by face, the index alone: two nearest-neighbour libraries against exact search, on this machine.

Every sighting of a face is a unit vector (SFace: 128 values). A search asks for every sighting at least
``--min-similarity`` (cosine) from a query face, which HNSW answers as a range query: usearch takes the
radius itself, faiss through ``range_search``. The sightings here are made, not photographed: ``--people``
faces, each seen ``sightings / people`` times with its own noise, so that one person's sightings are
about 0.5 to 0.8 alike (as SFace's are for one person in the sample photos, bench/threshold.py) and two
people's about 0 +- 0.09. Each query is a fresh sighting of a random person. For each library: how many
sightings a second it indexes (in batches of ``--add-batch``, as a store adds them while they arrive),
the query time (median and p99), the recall of what exact search (NumPy, all vectors in float32) finds
above the threshold, the index's memory and the time to save it to a file and load it back (what a
restarted dashboard waits); the query time and recall also at smaller sizes on the
way (``--checkpoints``: how they grow). First, how many sightings a second the alert store keeps
(``alertdb.sightings``: rows and offsets in one transaction per batch of events, two faces an event),
on SQLite and on a PostgreSQL server it starts.

Made-up vectors say nothing of real faces, so the faces ``bench threshold`` reads (the sample photos and
their flipped, cropped, re-encoded and scaled views, through YuNet and SFace) are then added to each
full index and each searched for at the threshold: the share of the same person's other faces found,
and the other people's faces found (false matches), beside exact search over the same vectors.
"""

import gc
import resource
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any, Protocol

import numpy as np

from bench import save, settings_of
from bench.figures import newest, source
from bench.machine import describe
from bench.postgres import PostgresServer
from bench.settings import SearchBenchConfig
from facestream.alertdb import open_database
from facestream.alertdb.sightings import ReceivedEvent, SightingWriter
from facestream.dashboard.faceindex import FaceIndex
from facestream.schemas import DetectionEvent, Face, ModelRef, event_id_for

NOISE = (0.05, 0.10)  # per sighting: same-person similarity about 1 / (1 + ndim * noise^2)
FACES_PER_EVENT = 2
DETECTOR, EMBEDDER = ModelRef("yunet", "2023mar", "0" * 64), ModelRef("sface", "2021dec", "1" * 64)


class RangeIndex(Protocol):
    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None: ...
    def within(self, vector: np.ndarray, min_similarity: float, limit: int) -> np.ndarray: ...
    def memory_bytes(self) -> int: ...
    def save(self, path: Path) -> None: ...
    def load(self, path: Path) -> None: ...


class Usearch:
    """The project's index (``facestream.dashboard.faceindex``): usearch's HNSW over float16 vectors, cosine."""

    def __init__(self, ndim: int, connectivity: int, expansion_add: int, expansion_search: int) -> None:
        self.index = FaceIndex(ndim, connectivity, expansion_add, expansion_search)

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        self.index.add_vectors(keys, vectors)

    def within(self, vector: np.ndarray, min_similarity: float, limit: int) -> np.ndarray:
        return np.asarray([key for key, _ in self.index.within(vector, min_similarity, limit)], np.int64)

    def memory_bytes(self) -> int:
        return int(self.index.graph.memory_usage)

    def save(self, path: Path) -> None:
        self.index.save(path)

    def load(self, path: Path) -> None:
        self.index = FaceIndex.restore(path)


class Faiss:
    """faiss's HNSW over float32 vectors, inner product (the vectors are unit length)."""

    def __init__(self, ndim: int, connectivity: int, expansion_add: int, expansion_search: int) -> None:
        import faiss

        self.faiss = faiss
        self.graph = faiss.IndexHNSWFlat(ndim, connectivity, faiss.METRIC_INNER_PRODUCT)
        self.graph.hnsw.efConstruction, self.graph.hnsw.efSearch = expansion_add, expansion_search
        self.index: Any = faiss.IndexIDMap2(self.graph)  # keys of our own; it holds the graph, as we do

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        self.index.add_with_ids(vectors.astype(np.float32), keys.astype(np.int64))

    def within(self, vector: np.ndarray, min_similarity: float, limit: int) -> np.ndarray:
        _, _, ids = self.index.range_search(vector.astype(np.float32)[None, :], min_similarity)
        return ids[:limit]

    def memory_bytes(self) -> int:
        return int(self.faiss.serialize_index(self.index).nbytes)

    def save(self, path: Path) -> None:
        self.faiss.write_index(self.index, str(path))

    def load(self, path: Path) -> None:
        self.index = self.faiss.read_index(str(path))


LIBRARIES: dict[str, Callable[..., RangeIndex]] = {"usearch": Usearch, "faiss": Faiss}


def sightings(cfg: SearchBenchConfig, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(faces of the people, unit, float32; the person of each sighting; the sightings, unit, float16)."""
    faces = _unit(rng.standard_normal((cfg.people, cfg.ndim), dtype=np.float32))
    person = rng.integers(0, cfg.people, cfg.sightings)
    seen = np.empty((cfg.sightings, cfg.ndim), np.float16)
    for start in range(0, cfg.sightings, 100_000):  # in parts: float32 noise for all at once is large
        part = slice(start, min(start + 100_000, cfg.sightings))
        seen[part] = _noisy(faces[person[part]], rng)
    return faces, person, seen


def run(cfg: SearchBenchConfig, command: str) -> dict:
    rng = np.random.default_rng(0)
    made = time.perf_counter()
    faces, _, seen = sightings(cfg, rng)
    queries = _noisy(faces[rng.integers(0, cfg.people, cfg.queries)], rng).astype(np.float32)
    print(f"{cfg.sightings:,} sightings of {cfg.people:,} people made in {time.perf_counter() - made:.1f} s")
    truth, exact_ms = _exact(seen, queries, cfg.min_similarity)
    result: dict[str, Any] = {
        "benchmark": "search",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg),
        "matches_per_query": _spread([len(t) for t in truth]),
        "exact": {"query_ms": _spread(exact_ms), "memory_mb": round(seen.size * 4 / 2**20, 1)},
        "libraries": {},
        "complete": False,
    }
    print(f"exact: {statistics.median(exact_ms):.1f} ms per query, {result['matches_per_query']['median']} matches")
    result["store"] = {name: _store(name, cfg, seen[: cfg.store_sightings]) for name in cfg.engines}
    save(result, cfg.out)
    real = _real_faces() if cfg.real_faces else []
    if real:
        result["real_faces"] = {
            "faces": len(real),
            "people": len({face["person"] for face in real}),
            "photos": len({face["photo"] for face in real}),
            "exact": _real_search(_exact_finder(seen, real, cfg.min_similarity), real, cfg.sightings),
        }
        print(f"real faces, exact: {result['real_faces']['exact']}")
    keys = np.arange(cfg.sightings, dtype=np.int64)
    for name in cfg.libraries:
        result["libraries"][name] = _measure(name, cfg, keys, seen, queries, truth, real)
        save(result, cfg.out)
        gc.collect()
    result["complete"] = True
    save(result, cfg.out)
    return result


def _measure(name, cfg: SearchBenchConfig, keys, seen, queries, truth, real: list[dict]) -> dict:
    index = LIBRARIES[name](cfg.ndim, cfg.connectivity, cfg.expansion_add, cfg.expansion_search)
    add_s, growth = 0.0, []
    sizes = sorted({n for n in cfg.checkpoints if n < len(keys)} | {len(keys)})
    for start in range(0, len(keys), cfg.add_batch):
        stop = min(start + cfg.add_batch, len(keys))
        began = time.perf_counter()
        index.add(keys[start:stop], seen[start:stop])
        add_s += time.perf_counter() - began
        if any(start < size <= stop for size in sizes):
            growth.append({"sightings": stop, **_queries(index, cfg, queries, [t[t < stop] for t in truth])})
            print(f"{name} at {stop:,}: {growth[-1]['query_ms']}")
    measured = {
        "add_per_s": round(len(keys) / add_s),
        **growth[-1],
        "growth": growth[:-1],
        "memory_mb": round(index.memory_bytes() / 2**20, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }
    del measured["sightings"]
    measured["saved"] = _save_and_load(index)
    if real:
        index.add(len(keys) + np.arange(len(real)), np.stack([face["vector"] for face in real]).astype(np.float16))
        measured["real_faces"] = _real_search(
            lambda vector: index.within(vector, cfg.min_similarity, cfg.limit), real, len(keys)
        )
    print(f"{name}: {measured}")
    return measured


def _save_and_load(index: RangeIndex) -> dict:
    """Seconds to write the index to a file and to read it back (a restart's wait), and the file's size."""
    with TemporaryDirectory() as folder:
        path = Path(folder) / "index"
        began = time.perf_counter()
        index.save(path)
        saved = time.perf_counter()
        index.load(path)
        return {
            "save_s": round(saved - began, 2),
            "load_s": round(time.perf_counter() - saved, 2),
            "file_mb": round(path.stat().st_size / 2**20, 1),
        }


def _queries(index: RangeIndex, cfg: SearchBenchConfig, queries: np.ndarray, truth: list[np.ndarray]) -> dict:
    """The query time over what ``index`` holds now, and the share of what exact search finds."""
    times, recalls = [], []
    for query, expected in zip(queries, truth):
        began = time.perf_counter()
        found = index.within(query, cfg.min_similarity, cfg.limit)
        times.append((time.perf_counter() - began) * 1000)
        if len(expected):
            recalls.append(len(np.intersect1d(found, expected)) / min(len(expected), cfg.limit))
    return {
        "query_ms": _spread(times),
        "recall": round(float(np.mean(recalls)), 4) if recalls else None,
        "recall_worst": round(float(np.min(recalls)), 4) if recalls else None,
    }


def _real_faces() -> list[dict]:
    """The sample photos' faces and their transformed views, embedded as the detector does
    (``bench threshold``'s faces: person, photo, variant, unit vector)."""
    from bench.threshold import embed

    faces, missed = embed("cpu")
    print(f"{len(faces)} real faces embedded ({len(missed)} views with no face)")
    return faces


def _exact_finder(seen: np.ndarray, real: list[dict], min_similarity: float) -> Callable[[np.ndarray], np.ndarray]:
    """Exact search over the made-up sightings, then the real faces keyed after them."""
    matrix = np.concatenate([seen.astype(np.float32), np.stack([face["vector"] for face in real])])
    return lambda vector: np.flatnonzero(matrix @ vector.astype(np.float32) >= min_similarity)


def _real_search(find: Callable[[np.ndarray], np.ndarray], real: list[dict], first_key: int) -> dict:
    """Each real face searched for: how many of its person's other faces come back (from the same photo:
    what a camera sees frame to frame; from other photos), how many of other people's (false matches),
    and how many made-up sightings (keys below ``first_key``)."""
    counts = dict.fromkeys(("one_photo", "one_photo_found", "two_photos", "two_photos_found", "others", "false"), 0)
    made_up = 0
    for i, face in enumerate(real):
        keys = np.asarray(find(face["vector"]), np.int64)
        made_up += int((keys < first_key).sum())
        found = set((keys[keys >= first_key] - first_key).tolist())
        for j, other in enumerate(real):
            if j == i:
                continue
            if other["person"] != face["person"]:
                kind, hit = "others", "false"
            else:
                kind = "one_photo" if other["photo"] == face["photo"] else "two_photos"
                hit = kind + "_found"
            counts[kind] += 1
            counts[hit] += j in found
    same = counts["one_photo"] + counts["two_photos"]
    return {
        "recall": round((counts["one_photo_found"] + counts["two_photos_found"]) / same, 4),
        "recall_one_photo": round(counts["one_photo_found"] / counts["one_photo"], 4),
        "recall_two_photos": round(counts["two_photos_found"] / counts["two_photos"], 4),
        "false_matches": counts["false"],
        "false_match_rate": round(counts["false"] / counts["others"], 4),
        "pairs": {"one_photo": counts["one_photo"], "two_photos": counts["two_photos"], "two_people": counts["others"]},
        "made_up_found": made_up,
    }


def _store(name: str, cfg: SearchBenchConfig, seen: np.ndarray) -> dict:
    """Sightings a second ``SightingWriter`` keeps on the database ``name``, in batches of ``cfg.batch`` events."""
    events = [
        ReceivedEvent("detections", 0, i, _event(i, seen[i * FACES_PER_EVENT : (i + 1) * FACES_PER_EVENT]))
        for i in range(len(seen) // FACES_PER_EVENT)
    ]
    with TemporaryDirectory() as folder:
        server = PostgresServer().start() if name == "postgresql" else None
        try:
            writer = SightingWriter(open_database(server.database() if server else f"sqlite:///{folder}/a.db"), "b")
            started = time.perf_counter()
            for start in range(0, len(events), cfg.batch):
                writer.write(events[start : start + cfg.batch])
            took = time.perf_counter() - started
            writer.engine.dispose()
        finally:
            if server:
                server.stop()
    measured = {"sightings": len(events) * FACES_PER_EVENT, "per_s": round(len(events) * FACES_PER_EVENT / took)}
    print(f"store on {name}: {measured}")
    return measured


def _event(seq: int, vectors: np.ndarray) -> DetectionEvent:
    faces = tuple(Face((10.0, 20.0, 90.0, 120.0), 0.9, embedding=v.astype("<f2").tobytes()) for v in vectors)
    ts = 1_700_000_000_000_000_000 + seq * 33_000_000
    return DetectionEvent(event_id_for("cam", seq, DETECTOR), "cam", seq, ts, ts, DETECTOR, 640, 480, faces, EMBEDDER)


def _exact(seen: np.ndarray, queries: np.ndarray, min_similarity: float) -> tuple[list[np.ndarray], list[float]]:
    """What every query should find, and how long NumPy takes over all vectors held in float32."""
    matrix = seen.astype(np.float32)
    truth, times = [], []
    for query in queries:
        began = time.perf_counter()
        truth.append(np.flatnonzero(matrix @ query >= min_similarity))
        times.append((time.perf_counter() - began) * 1000)
    return truth, times


def _noisy(faces: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    spread = rng.uniform(*NOISE, (len(faces), 1)).astype(np.float32)
    return _unit(faces + spread * rng.standard_normal(faces.shape, dtype=np.float32))


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _spread(values: list) -> dict:
    ordered = np.asarray(values, dtype=float)
    return {
        "median": round(float(np.median(ordered)), 3),
        "p99": round(float(np.percentile(ordered, 99)), 3),
        "max": round(float(ordered.max()), 3),
    }


SIGHTINGS_PER_S_GOAL = 10_000  # what the store keeps a second: 300 cameras at 30 fps, one face each, and room


def render(result: dict) -> list[str]:
    """The face-search index side by side with exact search, and the store's rate of keeping sightings."""
    m, s = result["machine"], result["settings"]
    lines = [
        f"**Search by face, {m['cores']} cores of an {m['cpu']}** (`{result['command']}`): {s['sightings']:,} "
        f"made-up {s['ndim']}-value sightings of {s['people']:,} people ({result['matches_per_query']['median']:.0f} "
        f"matches per query at the median), {s['queries']} queries at similarity {s['min_similarity']:g}, HNSW with "
        f"{s['connectivity']} links, {s['expansion_add']} candidates while adding and {s['expansion_search']} while "
        "searching:",
        "",
        "| | adds per second | query median | query p99 | recall (mean, worst query) | memory | saved, loaded again |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in result["libraries"].items():
        q, saved = r["query_ms"], r.get("saved")
        lines.append(
            f"| {name} | {r['add_per_s']:,} | {q['median']:.2f} ms | {q['p99']:.2f} ms "
            f"| {r['recall']:.4f}, {r['recall_worst']:.3f} | {r['memory_mb']:.0f} MB "
            + (f"| {saved['save_s']:g} s, {saved['load_s']:g} s ({saved['file_mb']:.0f} MB) |" if saved else "| - |")
        )
    q = result["exact"]["query_ms"]
    lines.append(
        f"| exact (NumPy) | - | {q['median']:.2f} ms | {q['p99']:.2f} ms | 1 | {result['exact']['memory_mb']:.0f} MB "
        "| - |"
    )
    lines += _growth(result) + _real_faces_found(result)
    kept = "; ".join(
        f"{engine} {r['per_s']:,} ({'met' if r['per_s'] >= SIGHTINGS_PER_S_GOAL else 'not met'})"
        for engine, r in result.get("store", {}).items()
    )
    if kept:
        lines += [
            "",
            f"Sightings the alert store kept per second ({s['store_sightings']:,} sightings, {s['batch']} events per "
            f"transaction; goal {SIGHTINGS_PER_S_GOAL:,}): {kept}.",
        ]
    usearch = result["libraries"].get("usearch")
    if usearch and usearch.get("saved"):
        lines += [
            "",
            f"So a dashboard indexing the {s['sightings']:,} sightings for the first time answers its first search "
            f"after about {s['sightings'] / usearch['add_per_s'] / 60:.0f} minutes; restarted, it loads its saved "
            f"copy in {usearch['saved']['load_s']:g} s.",
        ]
    lines += ["", source(result)]
    return lines


def _growth(result: dict) -> list[str]:
    """Query time and recall at the sizes measured on the way to the full index."""
    full = result["settings"]["sightings"]
    rows = [
        (name, size)
        for name, r in result["libraries"].items()
        for size in [*r.get("growth", []), {**r, "sightings": full}]
    ]
    if len(rows) == len(result["libraries"]):  # no sizes on the way
        return []
    lines = ["", "| | sightings | query median | query p99 | recall (mean, worst query) |", "|---|---|---|---|---|"]
    for name, size in rows:
        q = size["query_ms"]
        lines.append(
            f"| {name} | {size['sightings']:,} | {q['median']:.2f} ms | {q['p99']:.2f} ms "
            f"| {size['recall']:.4f}, {size['recall_worst']:.3f} |"
        )
    return lines


def _real_faces_found(result: dict) -> list[str]:
    """The sample photos' faces searched for among the made-up sightings."""
    real = result.get("real_faces")
    if not real:
        return []
    pairs = real["exact"]["pairs"]
    lines = [
        "",
        f"Real faces: {real['faces']} faces of {real['people']} people ({real['photos']} photos, each also flipped, "
        "cropped, re-encoded and scaled; YuNet and SFace) added to the full index and each searched for at "
        f"similarity {result['settings']['min_similarity']:g}: the share of the same person's other faces found "
        f"({pairs['one_photo']:,} pairs from one photo, {pairs['two_photos']:,} from two), and other people's faces "
        f"found ({pairs['two_people']:,} pairs):",
        "",
        "| | recall | one photo | two photos | false matches | made-up sightings found |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in [("exact", real["exact"]), *((n, m["real_faces"]) for n, m in result["libraries"].items())]:
        lines.append(
            f"| {name} | {r['recall']:.4f} | {r['recall_one_photo']:.4f} | {r['recall_two_photos']:.4f} "
            f"| {r['false_matches']} ({100 * r['false_match_rate']:.2f}%) | {r['made_up_found']} |"
        )
    return lines


def block(results: dict[str, dict]) -> str:
    """The newest search measurement for docs/search.md."""
    result = newest(results, "search")
    return "\n".join(render(result)) if result else "Not measured yet: run `python -m bench search`."
